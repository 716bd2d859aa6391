package skiplock_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/testwait"
)

// flowArgs is a job with a key to limit on.
type flowArgs struct {
	Host string `json:"host"`
	I    int    `json:"i"`
}

func (flowArgs) Kind() string { return "flow" }

// flowDB opens drivers on one database: each call another process's.
type flowDB struct {
	name string
	open func(t *testing.T) driver.Driver
}

// flowDBs are a fresh PostgreSQL schema and a fresh SQLite file.
// flowAdmin opens db in a client that keeps rules and works nothing.
func flowAdmin(t *testing.T, db flowDB, rules []skiplock.FlowRule) *skiplock.Client {
	t.Helper()
	c, err := skiplock.NewClient(db.open(t), &skiplock.Config{Flow: rules})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func flowDBs(t *testing.T) []flowDB {
	return []flowDB{
		{"postgres", func() func(t *testing.T) driver.Driver {
			var url string
			return func(t *testing.T) driver.Driver {
				if url == "" {
					var d driver.Driver
					d, url = pgtest.Schema(t)
					return d
				}
				return pgtest.Open(t, url)
			}
		}()},
		{"sqlite", func() func(t *testing.T) driver.Driver {
			var path string
			return func(t *testing.T) driver.Driver {
				first := path == ""
				if first {
					path = filepath.Join(t.TempDir(), "flow.db")
				}
				d, err := sqlitedriver.Open(t.Context(), path)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close() })
				if first {
					if _, err := d.Migrator().Up(t.Context(), 0); err != nil {
						t.Fatal(err)
					}
				}
				return d
			}
		}()},
	}
}

// flowClient starts a client on drv with the rules, working the flow kind
// with work.
func flowClient(t *testing.T, drv driver.Driver, id string, rules []skiplock.FlowRule,
	work func(context.Context, *skiplock.Job[flowArgs]) error) *skiplock.Client {
	t.Helper()
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[flowArgs](work))
	c, err := skiplock.NewClient(drv, &skiplock.Config{ID: id, Workers: workers, Flow: rules,
		Queues:            map[string]skiplock.QueueConfig{"default": {MaxWorkers: 20}},
		FetchPollInterval: 50 * time.Millisecond, FlowPollInterval: 20 * time.Millisecond,
		RescueInterval: 100 * time.Millisecond, LeaderTTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	return c
}

// insertFlow inserts n jobs for each host through c.
func insertFlow(t *testing.T, c *skiplock.Client, hosts []string, n int) {
	t.Helper()
	var params []skiplock.InsertManyParams
	for i := range n {
		for _, h := range hosts {
			params = append(params, skiplock.InsertManyParams{Args: flowArgs{Host: h, I: i}})
		}
	}
	if _, err := c.InsertMany(t.Context(), params); err != nil {
		t.Fatal(err)
	}
}

// finishedJobs waits until want jobs completed and answers them.
func finishedJobs(t *testing.T, c *skiplock.Client, want int, within time.Duration) []*skiplock.JobRow {
	t.Helper()
	var jobs []*skiplock.JobRow
	testwait.Until(t, within, "every job completed", func() bool {
		var err error
		jobs, err = c.JobList(t.Context(), skiplock.JobListParams{States: []skiplock.JobState{skiplock.StateCompleted}, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		return len(jobs) == want
	})
	return jobs
}

// A concurrency key of one never runs two jobs of a host at once, by the
// jobs' own records, with four clients (processes) claiming.
func TestFlowConcurrencyKeyAcrossClients(t *testing.T) {
	t.Parallel()
	for _, db := range flowDBs(t) {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			rules := []skiplock.FlowRule{{Name: "per-host", Queue: "default", Key: "payload.host", Concurrency: 1}}
			admin := flowAdmin(t, db, rules)
			hosts := []string{"a.example", "b.example", "c.example"}
			insertFlow(t, admin, hosts, 15)
			work := func(ctx context.Context, j *skiplock.Job[flowArgs]) error {
				time.Sleep(5 * time.Millisecond)
				return nil
			}
			for i := range 4 {
				flowClient(t, db.open(t), "flow-"+string(rune('a'+i)), rules, work)
			}
			jobs := finishedJobs(t, admin, 45, 90*time.Second)
			byHost := map[string][]*skiplock.JobRow{}
			for _, j := range jobs {
				var a flowArgs
				if err := json.Unmarshal(j.Payload, &a); err != nil {
					t.Fatal(err)
				}
				byHost[a.Host] = append(byHost[a.Host], j)
				if j.Attempt != 1 {
					t.Fatalf("job %d: attempt %d", j.ID, j.Attempt)
				}
			}
			workers := map[string]bool{}
			for host, js := range byHost {
				slices.SortFunc(js, func(a, b *skiplock.JobRow) int { return a.StartedAt.Compare(*b.StartedAt) })
				for i := 1; i < len(js); i++ {
					if js[i].StartedAt.Before(*js[i-1].FinishedAt) {
						t.Fatalf("host %s: job %d started at %s before job %d finished at %s", host,
							js[i].ID, js[i].StartedAt, js[i-1].ID, js[i-1].FinishedAt)
					}
				}
				for _, j := range js {
					workers[j.WorkerID] = true
				}
			}
			if len(workers) < 2 {
				t.Logf("only %d clients worked the jobs", len(workers))
			}
		})
	}
}

// A job held back by a limit stays pending with its attempt unspent, for
// the clients' claims and for outside workers' claims alike; the rescuer
// frees the slot of a worker that went silent.
func TestFlowHeldJobStaysPendingAndRescueFreesTheSlot(t *testing.T) {
	t.Parallel()
	for _, db := range flowDBs(t) {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			rules := []skiplock.FlowRule{{Name: "per-host", Queue: "default", Key: "payload.host", Concurrency: 1}}
			admin := flowAdmin(t, db, rules)
			first, _ := admin.Insert(ctx, flowArgs{Host: "a"}, nil)
			second, _ := admin.Insert(ctx, flowArgs{Host: "a", I: 1}, nil)
			other, _ := admin.Insert(ctx, flowArgs{Host: "b"}, nil)
			claimed, err := admin.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "ghost", Max: 10, Lease: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ids := []int64{}
			for _, j := range claimed {
				ids = append(ids, j.ID)
			}
			slices.Sort(ids)
			if !slices.Equal(ids, []int64{first.Job.ID, other.Job.ID}) {
				t.Fatalf("claimed %v, want %d and %d", ids, first.Job.ID, other.Job.ID)
			}
			again, err := admin.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "ghost", Max: 10})
			if err != nil || len(again) != 0 {
				t.Fatalf("second claim: %d jobs, %v", len(again), err)
			}
			held, _ := admin.JobGet(ctx, second.Job.ID)
			if held.State != skiplock.StatePending || held.Attempt != 0 {
				t.Fatalf("held job: %s attempt %d", held.State, held.Attempt)
			}
			// The ghost never reports: its lease runs out, the rescuer puts
			// its jobs back and frees the slot, and a client works all three.
			work := func(ctx context.Context, j *skiplock.Job[flowArgs]) error { return nil }
			flowClient(t, db.open(t), "worker", rules, work)
			jobs := finishedJobs(t, admin, 3, 60*time.Second)
			for _, j := range jobs {
				if j.ID == second.Job.ID && j.Attempt != 1 {
					t.Fatalf("the held job ran with attempt %d", j.Attempt)
				}
			}
		})
	}
}

// A rate of 10 jobs a second holds within 10% over 20 seconds across
// three clients, by the jobs' own start records.
func TestFlowRateLimitAcrossClients(t *testing.T) {
	if testing.Short() {
		t.Skip("20 s")
	}
	t.Parallel()
	for _, db := range flowDBs(t) {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			rules := []skiplock.FlowRule{{Name: "ten-a-second", Queue: "default", Rate: 10, Per: time.Second}}
			admin := flowAdmin(t, db, rules)
			insertFlow(t, admin, []string{"x"}, 400)
			work := func(ctx context.Context, j *skiplock.Job[flowArgs]) error { return nil }
			for i := range 3 {
				flowClient(t, db.open(t), "rate-"+string(rune('a'+i)), rules, work)
			}
			// The window is the 20 s from the first job's start, which a
			// loaded machine may delay: it is waited out whole.
			started := func() ([]*skiplock.JobRow, time.Time) {
				jobs, err := admin.JobList(t.Context(), skiplock.JobListParams{States: []skiplock.JobState{
					skiplock.StateCompleted, skiplock.StateRunning}, Limit: 10000})
				if err != nil {
					t.Fatal(err)
				}
				var first time.Time
				for _, j := range jobs {
					if first.IsZero() || j.StartedAt.Before(first) {
						first = *j.StartedAt
					}
				}
				return jobs, first
			}
			_, first := started()
			for deadline := time.Now().Add(time.Minute); first.IsZero(); _, first = started() {
				if time.Now().After(deadline) {
					t.Fatal("no job started within a minute")
				}
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(time.Until(first.Add(21 * time.Second)))
			jobs, first := started()
			n := 0
			for _, j := range jobs {
				if j.StartedAt.Before(first.Add(20 * time.Second)) {
					n++
				}
			}
			if n < 180 || n > 220 {
				t.Fatalf("%d jobs started in the first 20 s, want 200 ± 10%%", n)
			}
			t.Logf("%d jobs started in the first 20 s", n)
		})
	}
}

// Bad rules are refused, naming the field.
func TestFlowRulesAreChecked(t *testing.T) {
	t.Parallel()
	drv, _ := pgtest.Schema(t)
	for _, c := range []struct {
		rule  skiplock.FlowRule
		field string
	}{
		{skiplock.FlowRule{Name: "k", Queue: "q", Concurrency: -1}, "Flow[0].Concurrency"},
		{skiplock.FlowRule{Name: "k", Queue: "q"}, "set Concurrency or Rate"},
		{skiplock.FlowRule{Name: "k", Queue: "q", Rate: 10}, "Flow[0].Per"},
		{skiplock.FlowRule{Name: "k", Queue: "q", Rate: 10, Per: -time.Second}, "Flow[0].Per"},
		{skiplock.FlowRule{Name: "", Queue: "q", Concurrency: 1}, "Flow[0].Name"},
		{skiplock.FlowRule{Name: "k", Concurrency: 1}, "set Queue or Kind"},
		{skiplock.FlowRule{Name: "k", Queue: "q", Concurrency: 1, Key: "host"}, "Flow[0].Key"},
	} {
		_, err := skiplock.NewClient(drv, &skiplock.Config{Flow: []skiplock.FlowRule{c.rule}})
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want an error naming %s", c.rule, err, c.field)
		}
	}
}

// A kind's contract declares its limit: every client with the contracts
// keys its jobs and claims under it; a job missing the key's property is
// refused, naming it.
func TestFlowFromContracts(t *testing.T) {
	t.Parallel()
	for _, db := range flowDBs(t) {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			set, err := contract.Parse([]byte("version: 1\nkinds:\n  flow:\n    concurrency: {limit: 1, key: payload.host}\n"))
			if err != nil {
				t.Fatal(err)
			}
			c, err := skiplock.NewClient(db.open(t), &skiplock.Config{Contracts: set})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if _, err := c.Insert(ctx, flowArgs{Host: "h", I: i}, nil); err != nil {
					t.Fatal(err)
				}
			}
			claimed, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10})
			if err != nil || len(claimed) != 1 {
				t.Fatalf("claim: %d jobs, %v", len(claimed), err)
			}
			_, err = c.Insert(ctx, noHost{}, nil)
			var ve *skiplock.ValidationError
			if !errors.As(err, &ve) || ve.Field != "payload.host" {
				t.Fatalf("insert without host: %v", err)
			}
			queues, err := c.QueueList(ctx, false)
			if err != nil || len(queues) != 1 || len(queues[0].Flow) != 1 || queues[0].Flow[0].Running != 1 ||
				queues[0].Flow[0].Rule != "kind:flow" {
				t.Fatalf("queues: %+v %v", queues, err)
			}
		})
	}
}

// noHost is a job of the flow kind without the property its key reads.
type noHost struct{}

func (noHost) Kind() string { return "flow" }

// A concurrency lowered holds once the jobs running under the old one
// finish: a slot above the new limit is never taken again.
func TestFlowLoweredConcurrency(t *testing.T) {
	t.Parallel()
	for _, db := range flowDBs(t) {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			drv := db.open(t)
			rule := func(k int) *skiplock.Config {
				return &skiplock.Config{Flow: []skiplock.FlowRule{{Name: "h", Queue: "default", Key: "payload.host", Concurrency: k}}}
			}
			two, _ := skiplock.NewClient(drv, rule(2))
			one, _ := skiplock.NewClient(drv, rule(1))
			claim := func(c *skiplock.Client) []*skiplock.JobRow {
				jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10})
				if err != nil {
					t.Fatal(err)
				}
				return jobs
			}
			insertFlow(t, two, []string{"a"}, 2)
			held := claim(two)
			if len(held) != 2 {
				t.Fatalf("claimed %d under 2", len(held))
			}
			insertFlow(t, one, []string{"a"}, 3) // lowers the key to 1
			for _, j := range held {
				if _, _, err := one.Complete(ctx, j.ID, skiplock.CompleteParams{WorkerID: "w", Attempt: j.Attempt}); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(claim(one)); n != 1 {
				t.Fatalf("claimed %d under 1", n)
			}
			if n := len(claim(one)); n != 0 {
				t.Fatalf("claimed %d more under 1", n)
			}
		})
	}
}

// A job retried from the archive counts against its keys again.
func TestFlowRetriedJobKeepsItsLimit(t *testing.T) {
	t.Parallel()
	for _, db := range flowDBs(t) {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			rules := []skiplock.FlowRule{{Name: "h", Queue: "default", Key: "payload.host", Concurrency: 1}}
			c := flowAdmin(t, db, rules)
			failed, _ := c.Insert(ctx, flowArgs{Host: "a"}, nil)
			if _, err := c.JobCancel(ctx, failed.Job.ID); err != nil {
				t.Fatal(err)
			}
			running, _ := c.Insert(ctx, flowArgs{Host: "a", I: 1}, nil)
			if got, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10}); err != nil ||
				len(got) != 1 || got[0].ID != running.Job.ID {
				t.Fatalf("claim: %v %v", got, err)
			}
			if _, err := c.JobRetry(ctx, failed.Job.ID); err != nil {
				t.Fatal(err)
			}
			if got, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10}); err != nil || len(got) != 0 {
				t.Fatalf("the retried job was claimed beside the running one of its key: %v %v", got, err)
			}
		})
	}
}
