package skiplock

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// gateDriver holds its first claim and its first batch report until
// released, and records the size of each: how many jobs each claim asked
// for and each report named.
type gateDriver struct {
	driver.Driver
	mu               sync.Mutex
	claims, reports  []int
	reportClaims     [][2]int // a claim that reports: jobs reported, jobs asked for
	claimIn, claimGo chan struct{}
	doneIn, doneGo   chan struct{}
}

func newGateDriver(d driver.Driver) *gateDriver {
	return &gateDriver{Driver: d, claimIn: make(chan struct{}), claimGo: make(chan struct{}),
		doneIn: make(chan struct{}), doneGo: make(chan struct{})}
}

// hold records n and, on the first call of its kind, says so on in and
// waits for out.
func (d *gateDriver) hold(calls *[]int, n int, in, out chan struct{}) {
	d.mu.Lock()
	*calls = append(*calls, n)
	first := len(*calls) == 1
	d.mu.Unlock()
	if first {
		close(in)
		<-out
	}
}

func (d *gateDriver) JobClaim(ctx context.Context, p driver.ClaimParams) ([]*driver.Job, error) {
	d.hold(&d.claims, p.Max, d.claimIn, d.claimGo)
	return d.Driver.JobClaim(ctx, p)
}

func (d *gateDriver) JobCompleteMany(ctx context.Context, jobs []driver.CompleteParams) ([]driver.CompletedJob, error) {
	d.hold(&d.reports, len(jobs), d.doneIn, d.doneGo)
	return d.Driver.JobCompleteMany(ctx, jobs)
}

func (d *gateDriver) JobCompleteClaim(ctx context.Context, done []driver.CompleteParams, p driver.ClaimParams) ([]driver.CompletedJob, []*driver.Job, error) {
	d.mu.Lock()
	d.reportClaims = append(d.reportClaims, [2]int{len(done), p.Max})
	d.mu.Unlock()
	cc, err := driver.As[driver.CompleteClaimStore](d.Driver)
	if err != nil {
		return nil, nil, err
	}
	return cc.JobCompleteClaim(ctx, done, p)
}

func (d *gateDriver) sizes() (claims, reports []int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.claims), slices.Clone(d.reports)
}

var gatherDrivers = map[string]func(t *testing.T) driver.Driver{
	"postgres": func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
	"sqlite":   func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
}

// gatedClient answers a context of a minute, a gateDriver over open's
// driver, and a client on it with n jobs of startArgs inserted.
func gatedClient(t *testing.T, open func(t *testing.T) driver.Driver, n int) (context.Context, *gateDriver, *Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	drv := newGateDriver(open(t))
	c, err := NewClient(drv, &Config{})
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := c.Insert(ctx, startArgs{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	return ctx, drv, c
}

// waitGathered waits until n calls wait behind a run of g's key.
func waitGathered(t *testing.T, what string, waiting func() (int, bool), n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, running := waiting()
		if running && got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d calls waiting (a run under way: %v), want %d", what, got, running, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOneWorkersCallsInFlightShareAStatement: claims and batch reports of
// one external worker that arrive while another of its statements runs go
// into the next statement together, and each call still gets its own
// jobs and outcomes: claims get disjoint jobs, at most as many as each
// asked for; of two reports of one job, the first finishes it and the
// second waits for a statement of its own, where it is refused.
func TestOneWorkersCallsInFlightShareAStatement(t *testing.T) {
	t.Parallel()
	for name, open := range gatherDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, drv, c := gatedClient(t, open, 30)

			// Claims: the first holds the statement; three more wait and
			// go together.
			claimed := make([][]*JobRow, 4)
			var wg sync.WaitGroup
			claim := func(i, max int) {
				wg.Go(func() {
					jobs, err := c.Claim(ctx, ClaimParams{Queue: "default", WorkerID: "w", Max: max})
					if err != nil {
						t.Errorf("claim %d: %v", i, err)
					}
					claimed[i] = jobs
				})
			}
			place := c.claimPlaces.of("default", nil, nil)
			cp, err := c.claimParams(ClaimParams{Queue: "default", WorkerID: "w", Max: 1})
			if err != nil {
				t.Fatal(err)
			}
			key := claimKeyOf(place, cp)
			claim(0, 5)
			<-drv.claimIn
			for i, max := range []int{5, 10, 3} {
				claim(i+1, max)
				waitGathered(t, "claims", func() (int, bool) { return c.gathered.claims.Waiting(key) }, i+1)
			}
			close(drv.claimGo)
			wg.Wait()
			claims, _ := drv.sizes()
			if !slices.Equal(claims, []int{5, 18}) {
				t.Fatalf("claim statements asked for %v jobs, want [5 18]", claims)
			}
			seen := map[int64]bool{}
			for i, want := range []int{5, 5, 10, 3} {
				if len(claimed[i]) != want {
					t.Fatalf("claim %d got %d jobs, want %d", i, len(claimed[i]), want)
				}
				for _, j := range claimed[i] {
					if seen[j.ID] || j.WorkerID != "w" || j.State != StateRunning {
						t.Fatalf("claim %d: job %d (seen before: %v) is %s for %q", i, j.ID, seen[j.ID], j.State, j.WorkerID)
					}
					seen[j.ID] = true
				}
			}

			// Reports: the first holds the statement; the next two go
			// together; a report of a job one of them names waits.
			items := func(jobs []*JobRow) []CompleteManyItem {
				var out []CompleteManyItem
				for _, j := range jobs {
					out = append(out, CompleteManyItem{ID: j.ID, Attempt: j.Attempt})
				}
				return out
			}
			reports := [][]CompleteManyItem{items(claimed[0]), items(claimed[1]), items(claimed[2]), items(claimed[1][:1])}
			results := make([][]CompleteManyResult, len(reports))
			report := func(i int) {
				wg.Go(func() {
					res, err := c.CompleteMany(ctx, "w", reports[i])
					if err != nil {
						t.Errorf("report %d: %v", i, err)
					}
					results[i] = res
				})
			}
			report(0)
			<-drv.doneIn
			for i := 1; i < len(reports); i++ {
				report(i)
				waitGathered(t, "reports", func() (int, bool) { return c.completer.Waiting("w") }, i)
			}
			close(drv.doneGo)
			wg.Wait()
			_, sizes := drv.sizes()
			if !slices.Equal(sizes, []int{5, 15, 1}) {
				t.Fatalf("report statements named %v jobs, want [5 15 1]", sizes)
			}
			for i, res := range results[:3] {
				for _, r := range res {
					if r.Err != nil {
						t.Fatalf("report %d: job %d: %v", i, r.ID, r.Err)
					}
				}
			}
			if r := results[3]; len(r) != 1 || !errors.Is(r[0].Err, ErrLeaseLost) && !errors.Is(r[0].Err, ErrNotFound) {
				t.Fatalf("the second report of job %d: %+v, want it refused", claimed[1][0].ID, r)
			}
			for _, jobs := range claimed[:3] {
				for _, j := range jobs {
					got, err := drv.JobGet(ctx, j.ID)
					if err != nil || got.State != StateCompleted {
						t.Fatalf("job %d after its report: %+v, %v", j.ID, got, err)
					}
				}
			}
		})
	}
}

// A claim with an explicit lease never joins one that leases each job for
// its kind, even when that lease is the client's default.
func TestClaimsJoinOnlyUnderOneLease(t *testing.T) {
	t.Parallel()
	c, err := NewClient(sqlitetest.New(t), &Config{})
	if err != nil {
		t.Fatal(err)
	}
	place := c.claimPlaces.of("default", nil, nil)
	key := func(p ClaimParams) claimKey {
		cp, err := c.claimParams(p)
		if err != nil {
			t.Fatal(err)
		}
		return claimKeyOf(place, cp)
	}
	byKind := key(ClaimParams{Queue: "default", WorkerID: "w", Max: 1})
	if byKind != key(ClaimParams{Queue: "default", WorkerID: "w", Max: 7}) {
		t.Fatal("two claims of one worker that differ only in max do not join")
	}
	for _, p := range []ClaimParams{
		{Queue: "default", WorkerID: "w", Max: 1, Lease: c.config.Lease},
		{Queue: "default", WorkerID: "w", Max: 1, Lease: time.Hour},
		{Queue: "default", WorkerID: "v", Max: 1},
	} {
		if key(p) == byKind {
			t.Fatalf("a claim with lease %v for worker %q joins the kind-leased claims of worker w", p.Lease, p.WorkerID)
		}
	}
}

// TestClaimsThatReportShareATransaction: claims that carry reports, of one
// worker, that arrive while its claim runs go into one transaction; a
// claim reporting a job another of them reports waits for the next one,
// and there its report is refused.
func TestClaimsThatReportShareATransaction(t *testing.T) {
	t.Parallel()
	for name, open := range gatherDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, drv, c := gatedClient(t, open, 40)
			// Jobs the worker holds, claimed past the gate.
			held, err := drv.Driver.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: 12,
				DefaultLease: time.Minute})
			if err != nil || len(held) != 12 {
				t.Fatalf("claim: %d jobs, %v", len(held), err)
			}
			items := func(jobs []*driver.Job) []CompleteManyItem {
				var out []CompleteManyItem
				for _, j := range jobs {
					out = append(out, CompleteManyItem{ID: j.ID, Attempt: j.Attempt})
				}
				return out
			}
			calls := []struct {
				done []CompleteManyItem
				max  int
			}{
				{nil, 5}, {items(held[:4]), 3}, {items(held[4:8]), 2}, {items(held[:1]), 1}, {items(held[8:]), 1},
			}
			results := make([][]CompleteManyResult, len(calls))
			claimed := make([][]*JobRow, len(calls))
			var wg sync.WaitGroup
			call := func(i int) {
				wg.Go(func() {
					var err error
					results[i], claimed[i], err = c.CompleteAndClaim(ctx, calls[i].done,
						ClaimParams{Queue: "default", WorkerID: "w", Max: calls[i].max})
					if err != nil {
						t.Errorf("call %d: %v", i, err)
					}
				})
			}
			cp, err := c.claimParams(ClaimParams{Queue: "default", WorkerID: "w", Max: 1})
			if err != nil {
				t.Fatal(err)
			}
			key := claimKeyOf(c.claimPlaces.of("default", nil, nil), cp)
			call(0)
			<-drv.claimIn
			for i := 1; i < len(calls); i++ {
				call(i)
				waitGathered(t, "claims", func() (int, bool) { return c.gathered.claims.Waiting(key) }, i)
			}
			close(drv.claimGo)
			wg.Wait()
			drv.mu.Lock()
			got := slices.Clone(drv.reportClaims)
			drv.mu.Unlock()
			if want := [][2]int{{12, 6}, {1, 1}}; !slices.Equal(got, want) {
				t.Fatalf("claims that report ran as %v (jobs reported, jobs asked for), want %v", got, want)
			}
			seen := map[int64]bool{}
			for i, want := range []int{5, 3, 2, 1, 1} {
				if len(claimed[i]) != want {
					t.Fatalf("call %d got %d jobs, want %d", i, len(claimed[i]), want)
				}
				for _, j := range claimed[i] {
					if seen[j.ID] {
						t.Fatalf("job %d claimed twice", j.ID)
					}
					seen[j.ID] = true
				}
			}
			for _, i := range []int{1, 2, 4} {
				for k, r := range results[i] {
					if r.Err != nil || r.ID != calls[i].done[k].ID {
						t.Fatalf("call %d, report %d: %+v", i, k, r)
					}
				}
			}
			if r := results[3]; len(r) != 1 || !errors.Is(r[0].Err, ErrLeaseLost) {
				t.Fatalf("the second report of job %d: %+v, want it refused", held[0].ID, r)
			}
			for _, j := range held {
				if got, err := c.JobGet(ctx, j.ID); err != nil || got.State != StateCompleted {
					t.Fatalf("job %d after its report: %+v, %v", j.ID, got, err)
				}
			}
		})
	}
}
