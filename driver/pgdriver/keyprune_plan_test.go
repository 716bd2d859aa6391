package pgdriver_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestKeyPruneReadsExpiredKeysByIndex: among 100,000 window keys of which
// ten have expired, the pruner reads the expired range of the expiry
// index; without it, every run read every key.
func TestKeyPruneReadsExpiredKeysByIndex(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	ctx := t.Context()
	conn := pgtest.Conn(t, url)
	for _, stmt := range []string{
		`INSERT INTO skiplock_unique_keys (tenant, key, job_id, expires_at)
		 SELECT '', 'k' || i, i, now() + CASE WHEN i <= 10 THEN interval '-1 hour' ELSE interval '1 day' END
		 FROM generate_series(1, 100000) i`,
		`ANALYZE skiplock_unique_keys`,
		`PREPARE s(timestamptz, int) AS ` + pgdriver.Query("UniqueKeyPrune"),
	} {
		if _, err := conn.Exec(ctx, stmt, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	if got := pgdriver.QueryParams("UniqueKeyPrune"); strings.Join(got, ",") != "before,limit" {
		t.Fatalf("UniqueKeyPrune takes %v, the test gives before, limit", got)
	}
	plan := explain(t, conn, "auto", "EXECUTE s(now(), 1000)")
	if !strings.Contains(plan, "skiplock_unique_keys_expires on skiplock_unique_keys u") ||
		strings.Contains(plan, "Seq Scan on skiplock_unique_keys u") {
		t.Fatalf("the pruner does not read expired keys by index:\n%s", plan)
	}
}
