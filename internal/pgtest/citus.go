package pgtest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver/pgdriver"
)

// CitusShards is the shard count of a test's distributed schema: few, so
// that creating one stays quick; two workers still get two shards each.
const CitusShards = 4

// CitusURL answers the coordinator of a Citus cluster for tests
// (SKIPLOCK_TEST_CITUS_URL, which scripts/test sets from scripts/citus when
// Citus is installed); the test is skipped, saying so, when there is none.
func CitusURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("SKIPLOCK_TEST_CITUS_URL")
	if u == "" {
		t.Skip("no Citus cluster: SKIPLOCK_TEST_CITUS_URL is not set (scripts/citus starts one when Citus is installed)")
	}
	return u
}

// CitusSchemaMigrated creates a fresh schema on the Citus coordinator,
// migrated but not distributed, and answers a driver on it and its URL.
func CitusSchemaMigrated(t testing.TB) (*pgdriver.Driver, string) {
	t.Helper()
	base := CitusURL(t)
	url := WithSearchPath(base, freshOn(t, base, "SCHEMA", "", " CASCADE"))
	return migrated(t, url), url
}

var citusDDL sync.Mutex

// CitusSchema creates a fresh schema on the Citus coordinator, migrated and
// distributed as `skiplock migrate up --citus` does, and answers a driver on
// it and its URL; the schema is dropped when the test ends.
func CitusSchema(t testing.TB) (*pgdriver.Driver, string) {
	t.Helper()
	d, url := CitusSchemaMigrated(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// One distribution at a time: side by side they deadlock on the
	// cluster's catalogs.
	citusDDL.Lock()
	defer citusDDL.Unlock()
	if err := retryDeadlock(ctx, func() error {
		_, err := d.Distribute(ctx, pgdriver.CitusOptions{Shards: CitusShards})
		return err
	}); err != nil {
		t.Fatalf("distribute on citus: %v", err)
	}
	return d, url
}
