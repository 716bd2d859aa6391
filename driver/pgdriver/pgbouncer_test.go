package pgdriver_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/drivertest"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// sessionCases are the conformance cases run through PgBouncer: one or
// more of each family of statements, and each thing a session could hold
// (LISTEN, transactions, COPY, advisory and planner settings, migrations,
// the leader, archive partitions). Without pool_mode=transaction 16 of
// the 90 cases fail, 13 of them among these; SKIPLOCK_TEST_PGBOUNCER_ALL=1
// runs all of them (as long again as the direct run).
var sessionCases = []string{
	"NotifierDeliversWakeUpsAndCancels", "LeaderElection", "MigrationsDownUp", "TransactionCommitRollback",
	"InsertFastPlainBatch", "InsertFastEveryColumn", "IdempotencyConcurrent", "ClaimOrder", "FairClaimSharesTenants",
	"FlowRateStartsProveLimit", "FlowConcurrencyKey", "FlowSweepDropsIdleKeys", "CompleteManyRepeatsAndResults",
	"CompleteClaimReportsThenClaims", "HeartbeatExtendsOnlyHeldJobs", "FailRetriesThenFails", "RescueSince",
	"PauseRunningKeepsCheckpointAndAttempt", "DependenciesFailureCancelsTree", "ListLiveAndArchived", "ListFilters",
	"JobMetrics", "Schedules", "RestoreArchive", "RestoreQueueWaits", "UniqueKeyPrune", "BulkManyChunks",
	"ProcessesBeatListExpire", "Tokens",
}

// TestConformanceThroughPgBouncer runs the conformance suite's
// sessionCases through PgBouncer in transaction mode
// (SKIPLOCK_TEST_PGBOUNCER_URL, which scripts/test sets): every statement
// goes unprepared over whichever server connection the pooler lends,
// LISTEN over a direct connection.
func TestConformanceThroughPgBouncer(t *testing.T) {
	pgtest.PgBouncerURL(t)
	names := sessionCases
	if os.Getenv("SKIPLOCK_TEST_PGBOUNCER_ALL") == "1" {
		names = nil
	}
	drivertest.RunNamed(t, names, func(t *testing.T) driver.Driver {
		d, _ := pgtest.PooledSchema(t, pgdriver.Options{})
		return d
	}, func(t *testing.T, d driver.Driver, id int64) { pgtest.SetNextJobID(t, d.(*pgdriver.Driver), id) })
}

// TestPoolModeURL: pool_mode takes transaction or session; in transaction
// mode a search_path in the URL, which the pooler would not keep, is
// refused with the way to set it.
func TestPoolModeURL(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		pgtest.URL() + "&pool_mode=statement":                 `pool_mode: "statement" is not transaction or session`,
		pgtest.URL() + "&pool_mode=transaction&search_path=s": "search_path: a pooler in transaction mode does not keep it",
	} {
		_, err := pgdriver.Open(t.Context(), url, pgdriver.Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s): %v, want an error containing %q", url, err, want)
		}
	}
}

// TestNoListenThroughPgBouncerWithoutListenURL: through a pooler in
// transaction mode and with no listen URL, Listen answers ErrNoListen (the
// client polls) instead of a LISTEN the pooler would lose.
func TestNoListenThroughPgBouncerWithoutListenURL(t *testing.T) {
	t.Parallel()
	d, url := pgtest.PooledSchema(t, pgdriver.Options{})
	other, err := pgdriver.Open(t.Context(), url, pgdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close)
	err = other.Notifier().Listen(t.Context(), func(string) {}, func(int64) {})
	if !errors.Is(err, driver.ErrNoListen) {
		t.Fatalf("Listen: %v, want ErrNoListen", err)
	}
	// The driver with a listen URL hears a cancel sent through the pooler.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan int64, 1)
	listening := make(chan struct{}, 1)
	go func() {
		_ = d.Notifier().Listen(ctx, func(string) {
			select {
			case listening <- struct{}{}:
			default:
			}
		}, func(id int64) { got <- id })
	}()
	<-listening
	if err := other.Notifier().NotifyCancel(t.Context(), 7); err != nil {
		t.Fatal(err)
	}
	if id := <-got; id != 7 {
		t.Fatalf("heard cancel of %d, want 7", id)
	}
}
