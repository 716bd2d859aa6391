package sqlitedriver_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestKeyPruneReadsExpiredKeysByIndex: the pruner reads the expired range
// of the expiry index, not every window key.
func TestKeyPruneReadsExpiredKeysByIndex(t *testing.T) {
	t.Parallel()
	d := sqlitetest.New(t)
	ctx := t.Context()
	now := time.Now().UnixMicro()
	if _, err := d.DB().ExecContext(ctx, `
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO skiplock_unique_keys (tenant, key, job_id, expires_at)
SELECT '', 'k' || i, i, ?1 + CASE WHEN i <= 10 THEN -3600000000 ELSE 86400000000 END FROM n`, now); err != nil {
		t.Fatal(err)
	}
	if _, err := d.DB().ExecContext(ctx, `ANALYZE`); err != nil {
		t.Fatal(err)
	}
	plan := queryPlan(t, d, "UniqueKeyPrune", sql.Named("before", now), sql.Named("limit", 1000))
	if !strings.Contains(plan, "USING INDEX skiplock_unique_keys_expires") {
		t.Fatalf("the pruner does not read expired keys by index:\n%s", plan)
	}
}
