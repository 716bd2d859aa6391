package skiplock_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// sharedDatabases runs fn on a fresh PostgreSQL schema and a fresh SQLite
// file; open answers another driver on the same database, as another
// process would have.
func sharedDatabases(t *testing.T, fn func(t *testing.T, open func() driver.Driver)) {
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		_, url := pgtest.Schema(t)
		fn(t, func() driver.Driver {
			pool, err := pgxpool.New(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			return pgdriverNew(pool)
		})
	})
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "skiplock.db")
		fn(t, func() driver.Driver { return sqlitetest.Open(t, path) })
	})
}

// insertTenant enqueues n jobs of tenant at priority prio, in batches.
func insertTenant(t *testing.T, c *skiplock.Client, tenant string, n, prio int) []int64 {
	t.Helper()
	var ids []int64
	for n > 0 {
		batch := make([]skiplock.InsertManyParams, min(n, 10000))
		for i := range batch {
			batch[i] = skiplock.InsertManyParams{Args: sleepArgs{N: i},
				Opts: &skiplock.InsertOpts{Tenant: tenant, Priority: &prio}}
		}
		got, err := c.InsertMany(t.Context(), batch)
		if err != nil {
			t.Fatalf("insert %d jobs of tenant %q: %v", len(batch), tenant, err)
		}
		ids = append(ids, got...)
		n -= len(batch)
	}
	return ids
}

// TestFairTenantsFlood: tenant a enqueues 20,000 jobs, then tenant b 100;
// three clients work the queue with fairness on. Every job of b finishes,
// and starts, before a's 5,000th, by the jobs' own records. In claim order
// b's jobs come after all of a's: an unfair claim would reach them after
// 20,000 of a's. (The claim finds tenants by a skip scan and takes each
// one's head by its index, so a's backlog past what the test reads, 10,000,
// does not change what it claims; 100,000 cost over a minute of inserts on
// SQLite under the race detector.)
func TestFairTenantsFlood(t *testing.T) {
	t.Parallel()
	sharedDatabases(t, func(t *testing.T, open func() driver.Driver) {
		ctx := t.Context()
		admin, err := skiplock.NewClient(open(), nil)
		if err != nil {
			t.Fatal(err)
		}
		aIDs := insertTenant(t, admin, "a", 20000, skiplock.DefaultPriority)
		bIDs := insertTenant(t, admin, "b", 100, skiplock.DefaultPriority)
		var workedA, workedB atomic.Int64
		work := func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
			if j.Tenant == "b" {
				workedB.Add(1)
			} else {
				workedA.Add(1)
			}
			return nil
		}
		var clients []*skiplock.Client
		for i := range 3 {
			workers := skiplock.NewWorkers()
			skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](work))
			c, err := skiplock.NewClient(open(), &skiplock.Config{ID: "client-" + string(rune('a'+i)),
				Workers: workers, Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 50}},
				Fairness: map[string]skiplock.Fairness{"default": {}}, FetchPollInterval: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			clients = append(clients, c)
		}
		testwait.Until(t, 3*time.Minute, "b's jobs and 6,000 of a's", func() bool {
			return workedB.Load() == 100 && workedA.Load() >= 6000
		})
		for _, c := range clients {
			if err := c.Stop(ctx); err != nil {
				t.Fatal(err)
			}
		}
		tb := "b"
		bJobs, err := admin.JobList(ctx, skiplock.JobListParams{Tenant: &tb, Limit: 1000})
		if err != nil || len(bJobs) != len(bIDs) {
			t.Fatalf("list b's jobs: %d, %v", len(bJobs), err)
		}
		var lastFinished, lastStarted time.Time
		for _, j := range bJobs {
			if j.State != skiplock.StateCompleted || j.Attempt != 1 {
				t.Fatalf("b's job %d: %s, attempt %d", j.ID, j.State, j.Attempt)
			}
			if j.FinishedAt.After(lastFinished) {
				lastFinished = *j.FinishedAt
			}
			if j.StartedAt.After(lastStarted) {
				lastStarted = *j.StartedAt
			}
		}
		ta := "a"
		aBefore, err := admin.JobList(ctx, skiplock.JobListParams{Tenant: &ta, States: []skiplock.JobState{skiplock.StateCompleted},
			FinishedBefore: lastFinished.Add(time.Microsecond), Limit: 5000})
		if err != nil {
			t.Fatal(err)
		}
		if len(aBefore) >= 5000 {
			t.Fatalf("a had finished %d jobs by the time b's last finished", len(aBefore))
		}
		// a's jobs start in claim order: its first 10,000 hold every one
		// that started by b's last start, unless the claim was unfair.
		aFirst, err := admin.JobList(ctx, skiplock.JobListParams{Tenant: &ta, BeforeID: aIDs[10000], Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		started := 0
		for _, j := range aFirst {
			if j.StartedAt != nil && !j.StartedAt.After(lastStarted) {
				started++
			}
		}
		if started >= 5000 {
			t.Fatalf("a had started %d jobs by the time b's last started", started)
		}
		t.Logf("by b's last start, a had started %d jobs; by b's last finish, a had finished %d", started, len(aBefore))
	})
}

// TestFairClaimWeights: claims of workers outside the process (the HTTP
// protocol's Claim) share the queue by the tenants' weights, 3:1 here,
// while both tenants have a backlog, and each tenant's jobs come in its own
// priority order.
func TestFairClaimWeights(t *testing.T) {
	t.Parallel()
	sharedDatabases(t, func(t *testing.T, open func() driver.Driver) {
		ctx := t.Context()
		c, err := skiplock.NewClient(open(), &skiplock.Config{
			Fairness: map[string]skiplock.Fairness{"default": {Weights: map[string]int{"a": 3}}}})
		if err != nil {
			t.Fatal(err)
		}
		insertTenant(t, c, "a", 200, 1)
		insertTenant(t, c, "a", 200, 9)
		insertTenant(t, c, "b", 400, 5)
		claim := func(max int) map[string]int {
			jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: max})
			if err != nil {
				t.Fatal(err)
			}
			n := map[string]int{}
			for _, j := range jobs {
				n[j.Tenant]++
				if j.Tenant == "a" && n["a"] <= 200 && j.Priority != 9 {
					t.Fatalf("a's job %d of priority %d claimed before its urgent ones", j.ID, j.Priority)
				}
			}
			return n
		}
		if n := claim(40); n["a"] != 30 || n["b"] != 10 {
			t.Fatalf("a claim of 40 at weights 3:1 took %v", n)
		}
		total := map[string]int{}
		for range 40 {
			for tenant, k := range claim(4) {
				total[tenant] += k
			}
		}
		if total["a"]+total["b"] != 160 || total["a"] < 100 || total["a"] > 140 {
			t.Fatalf("40 claims of 4 at weights 3:1 took %v", total)
		}
		// A claim scoped to one tenant takes only that tenant's jobs.
		b := "b"
		jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10, Tenant: &b})
		if err != nil || len(jobs) != 10 || jobs[0].Tenant != "b" || jobs[9].Tenant != "b" {
			t.Fatalf("a claim scoped to b: %d jobs, %v", len(jobs), err)
		}
	})
}

func TestFairnessConfigNamesTheBadField(t *testing.T) {
	t.Parallel()
	for cfg, want := range map[*skiplock.Config]string{
		{Fairness: map[string]skiplock.Fairness{"q": {Weights: map[string]int{"acme": 0}}}}:    `config: Fairness["q"].Weights["acme"]: must be between 1 and 1000, got 0`,
		{Fairness: map[string]skiplock.Fairness{"q": {Weights: map[string]int{"acme": 1001}}}}: `config: Fairness["q"].Weights["acme"]: must be between 1 and 1000, got 1001`,
		{Fairness: map[string]skiplock.Fairness{"": {}}}:                                       `config: Fairness: queue name must not be empty`,
	} {
		_, err := skiplock.NewClient(sqlitetest.New(t), cfg)
		if err == nil || err.Error() != want {
			t.Errorf("NewClient: %v, want %s", err, want)
		}
	}
}

// TestFairIndexMadeOnlyWithFairness: no migration makes the tenant claim
// index (every insert would pay an entry in it); a client without
// Fairness does not make it, one with Fairness makes it as it starts.
func TestFairIndexMadeOnlyWithFairness(t *testing.T) {
	t.Parallel()
	hasIndex := map[string]func(t *testing.T) bool{}
	pg, url := pgtest.Schema(t)
	conn := pgtest.Conn(t, url)
	hasIndex["postgres"] = func(t *testing.T) bool {
		var ok bool
		if err := conn.QueryRow(t.Context(), `SELECT coalesce((SELECT indisvalid FROM pg_index
			WHERE indexrelid = to_regclass('skiplock_jobs_claim_tenant')), false)`).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	lite := sqlitetest.New(t)
	hasIndex["sqlite"] = func(t *testing.T) bool {
		var n int
		if err := lite.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_master
			WHERE type = 'index' AND name = 'skiplock_jobs_claim_tenant'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	for name, drv := range map[string]driver.Driver{"postgres": pg, "sqlite": lite} {
		t.Run(name, func(t *testing.T) {
			start := func(fair map[string]skiplock.Fairness) {
				t.Helper()
				c, err := skiplock.NewClient(drv, &skiplock.Config{Fairness: fair})
				if err != nil {
					t.Fatal(err)
				}
				if err := c.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Stop(context.Background()) })
			}
			start(nil)
			if hasIndex[name](t) {
				t.Fatal("the tenant claim index is there without any client with Fairness")
			}
			start(map[string]skiplock.Fairness{"default": {}})
			testwait.Until(t, time.Minute, "the tenant claim index, made by a client with Fairness", func() bool {
				return hasIndex[name](t)
			})
		})
	}
}
