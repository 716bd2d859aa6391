package pgdriver_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/drivertest"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

// Why a conformance case cannot pass on a schema distributed on Citus
// (docs/scale.md, "Limits").
const (
	citusRefusesDeps   = "depends_on is refused on Citus: a parent's row may be in another shard, where Citus cannot lock it"
	citusRefusesFlow   = "concurrency and rate keys are refused on Citus: their slots are freed by a trigger, and a shard cannot write another table"
	citusRefusesWindow = "window idempotency keys are refused on Citus: it runs no now() in an ON CONFLICT clause"
	citusFair          = "fair claims (Config.Fairness) walk the tenants with a recursive CTE, which Citus runs only inside one shard"
	citusRestore       = "restoring from the vault checks each id against the jobs and the archive of every queue (a join on id, not on queue) and locks parents across shards, which Citus refuses"
	citusDown          = "migrate down sends several commands as one prepared statement, which Citus refuses on a distributed schema"
)

// citusSkips lists the conformance cases that cannot pass on Citus, and why.
var citusSkips = map[string]string{
	"DependenciesCancelledParent":                            citusRefusesDeps,
	"DependenciesFailureCancelsTree":                         citusRefusesDeps,
	"DependenciesFanOutFanIn":                                citusRefusesDeps,
	"DependenciesMissingParent":                              citusRefusesDeps,
	"RetriedDependentWaitsForItsParents":                     citusRefusesDeps,
	"InsertStates":                                           citusRefusesDeps,
	"JobComplete_cancels_on_request_and_releases_dependents": citusRefusesDeps,
	"BulkManyMatchSingle":                                    citusRefusesDeps,
	"FlowConcurrencyKey":                                     citusRefusesFlow,
	"FlowRateKey":                                            citusRefusesFlow,
	"FlowRateStartsProveLimit":                               citusRefusesFlow,
	"FlowSweepDropsIdleKeys":                                 citusRefusesFlow,
	"FlowSweepInBatches":                                     citusRefusesFlow,
	"FlowSweepKeepsKeysInUse":                                citusRefusesFlow,
	"FlowWinsOverFair":                                       citusRefusesFlow,
	"IdempotencyConcurrent":                                  citusRefusesWindow,
	"IdempotencyWindow":                                      citusRefusesWindow,
	"UniqueKeyPrune":                                         citusRefusesWindow,
	"FairClaimFillsFromTenantsWithMore":                      citusFair,
	"FairClaimKeepsPriorityInsideTenant":                     citusFair,
	"FairClaimSharesTenants":                                 citusFair,
	"FairClaimSkipsPausedQueues":                             citusFair,
	"FairClaimWeights":                                       citusFair,
	"RestoreArchive":                                         citusRestore,
	"RestoreFirstID":                                         citusRestore,
	"RestoreQueue":                                           citusRestore,
	"RestoreQueueWaits":                                      citusRestore,
	"RestoreSkipsPresent":                                    citusRestore,
	"QueueListArchivedQueues":                                citusRestore,
	"JobFail_is_fenced_and_settles_dependents":               citusRefusesDeps,
	"IDsPast2To31Lifecycle":                                  citusRefusesDeps,
	"MigrationsDownUp":                                       citusDown,
}

// TestCitusConformance runs the conformance suite on a schema distributed on
// Citus (SKIPLOCK_TEST_CITUS_URL, a coordinator with workers), but for the
// cases citusSkips names.
func TestCitusConformance(t *testing.T) {
	pgtest.CitusURL(t)
	drivertest.Run(t, func(t *testing.T) driver.Driver {
		if why, ok := citusSkips[strings.TrimPrefix(t.Name(), "TestCitusConformance/")]; ok {
			t.Skip(why)
		}
		d, _ := pgtest.CitusSchema(t)
		return d
	}, func(t *testing.T, d driver.Driver, id int64) { pgtest.SetNextJobID(t, d.(*pgdriver.Driver), id) })
}

// TestDistributeRefusesWithoutCitus: on a PostgreSQL without the extension
// the distribution step says what is missing and changes nothing.
func TestDistributeRefusesWithoutCitus(t *testing.T) {
	d, _ := pgtest.Schema(t)
	if _, err := d.Distribute(t.Context(), pgdriver.CitusOptions{}); !errors.Is(err, pgdriver.ErrNoCitus) {
		t.Fatalf("Distribute without citus: %v, want ErrNoCitus", err)
	}
	if _, err := d.Distribute(t.Context(), pgdriver.CitusOptions{Shards: -1}); err == nil {
		t.Fatal("Distribute with -1 shards: no error")
	}
	on, err := d.OnCitus(t.Context())
	if err != nil || on {
		t.Fatalf("OnCitus = %v, %v; want false", on, err)
	}
}

// TestCitusRefusesWhatItCannotDistribute: on a distributed schema an insert
// with dependencies, flow keys or a window key fails naming the field and
// stores nothing; a plain one goes in.
func TestCitusRefusesWhatItCannotDistribute(t *testing.T) {
	d, _ := pgtest.CitusSchema(t)
	ctx := t.Context()
	if again, err := d.Distribute(ctx, pgdriver.CitusOptions{}); err != nil || again {
		t.Fatalf("Distribute again: %v, %v; want false, nil", again, err)
	}
	plain, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "q", Priority: 5, MaxRetries: 3}})
	if err != nil {
		t.Fatal(err)
	}
	for field, p := range map[string]*driver.InsertParams{
		"depends_on":      {Kind: "a", Queue: "q", DependsOn: []int64{plain[0].Job.ID}},
		"concurrency_key": {Kind: "a", Queue: "q", Flow: &driver.FlowKeys{ConcurrencyKey: "k", ConcurrencyLimit: 1}},
		"window":          {Kind: "a", Queue: "q", IdempotencyKey: "k", UniqueWindow: 60e9},
	} {
		p.Priority, p.MaxRetries = 5, 3
		_, err := d.JobInsertMany(ctx, []*driver.InsertParams{p})
		if !errors.Is(err, driver.ErrUnsupported) || !strings.Contains(err.Error(), field) {
			t.Errorf("insert with %s: %v, want ErrUnsupported naming it", field, err)
		}
	}
	var n int
	if err := d.Pool().QueryRow(ctx, `SELECT count(*) FROM skiplock_jobs`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("jobs stored: %d, %v; want the plain one only", n, err)
	}
}

// TestCitusThroughOpen: a driver opened on a URL, whose claims and
// completions run on pools of their own, knows the schema is distributed
// there too: it claims (without the forced generic plan Citus cannot
// distribute), heartbeats, completes and fails in the jobs' shards.
func TestCitusThroughOpen(t *testing.T) {
	_, url := pgtest.CitusSchema(t)
	d, err := pgdriver.Open(t.Context(), url, pgdriver.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	ctx := t.Context()
	var ps []*driver.InsertParams
	for range 8 {
		ps = append(ps, &driver.InsertParams{Kind: "a", Queue: "q", Priority: 5, MaxRetries: 3})
	}
	if _, err := d.JobInsertMany(ctx, ps); err != nil {
		t.Fatal(err)
	}
	var held []*driver.Job
	for range 8 { // past the five custom plans PostgreSQL makes before a generic one
		got, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "q", WorkerID: "w", Max: 1, DefaultLease: time.Minute})
		if err != nil || len(got) != 1 {
			t.Fatalf("claim: %v, %v", got, err)
		}
		held = append(held, got[0])
	}
	h := func(j *driver.Job) driver.HeldJob {
		return driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w", Queue: j.Queue}
	}
	if res, err := d.JobHeartbeat(ctx, driver.HeartbeatParams{WorkerID: "w", IDs: []int64{held[0].ID},
		Attempts: []int{1}, Leases: []time.Duration{time.Hour}, Queues: []string{"q"}}); err != nil || len(res) != 1 {
		t.Fatalf("heartbeat: %v, %v", res, err)
	}
	done, err := d.JobCompleteMany(ctx, []driver.CompleteParams{{HeldJob: h(held[0])}, {HeldJob: h(held[1])}})
	if err != nil || len(done) != 2 {
		t.Fatalf("complete: %v, %v", done, err)
	}
	j, err := d.JobFail(ctx, driver.FailParams{HeldJob: h(held[2]), Wait: time.Hour,
		Error: driver.AttemptError{Attempt: 1, Type: "t", Message: "again", Retryable: true}})
	if err != nil || j.State != driver.StateScheduled {
		t.Fatalf("fail: %v, %v; want scheduled", j, err)
	}
}
