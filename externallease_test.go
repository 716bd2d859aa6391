package skiplock_test

import (
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
)

const leaseContracts = `
version: 1
kinds:
  short: {lease: 30s}
  long: {lease: 10m}
`

// TestExternalClaimAndHeartbeatTakeTheKindsLease: a claim or heartbeat from
// outside without a lease gives each job its kind's lease (contract, or the
// worker's options), else Config.Lease; an explicit lease wins.
func TestExternalClaimAndHeartbeatTakeTheKindsLease(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		set, err := contract.Parse([]byte(leaseContracts))
		if err != nil {
			t.Fatal(err)
		}
		workers := skiplock.NewWorkers()
		skiplock.MustAddWorker(workers, skiplock.WorkFunc[taskArgs](nil), skiplock.WorkerOpts{Lease: 3 * time.Minute})
		c := b.client(t, false, func(cfg *skiplock.Config) { cfg.Contracts, cfg.Workers = set, workers })
		want := map[int64]time.Duration{}
		for kind, lease := range map[string]time.Duration{"short": 30 * time.Second, "long": 10 * time.Minute,
			"other": skiplock.DefaultLease} {
			want[b.insert(t, c, raw(kind, `{}`), nil).ID] = lease
		}
		want[b.insert(t, c, taskArgs{Name: "w"}, nil).ID] = 3 * time.Minute

		got, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10})
		if err != nil || len(got) != 4 {
			t.Fatalf("claim: %d jobs, %v", len(got), err)
		}
		for _, j := range got {
			if !near(*j.LeaseUntil, j.StartedAt.Add(want[j.ID])) {
				t.Errorf("claim: %s job leased for %s, want %s", j.Kind, j.LeaseUntil.Sub(*j.StartedAt), want[j.ID])
			}
		}
		for _, j := range got {
			for _, attempt := range []int{0, 1} { // with and without the attempt fence
				res, err := c.Heartbeat(b.ctx, j.ID, skiplock.HeartbeatParams{WorkerID: "w", Attempt: attempt})
				if err != nil || !near(res.LeaseUntil, time.Now().Add(want[j.ID])) {
					t.Errorf("heartbeat of %s (attempt %d): %+v, %v; want lease %s", j.Kind, attempt, res, err, want[j.ID])
				}
			}
			res, err := c.Heartbeat(b.ctx, j.ID, skiplock.HeartbeatParams{WorkerID: "w", Lease: time.Hour})
			if err != nil || !near(res.LeaseUntil, time.Now().Add(time.Hour)) {
				t.Errorf("heartbeat of %s with a lease: %+v, %v", j.Kind, res, err)
			}
		}

		explicit := b.insert(t, c, raw("short", `{}`), nil)
		got, err = c.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 10, Lease: time.Hour})
		if err != nil || len(got) != 1 || got[0].ID != explicit.ID || !near(*got[0].LeaseUntil, got[0].StartedAt.Add(time.Hour)) {
			t.Fatalf("claim with a lease: %+v, %v", got, err)
		}
	})
}

func near(a, b time.Time) bool { return a.Sub(b).Abs() < 5*time.Second }

// TestExternalLeasesFollowTheStoredContracts: a client that claims for
// workers outside (a server) gives the kinds' leases of the stored contract
// set, started or not, and those of a newer version once it is in force,
// without a restart.
func TestExternalLeasesFollowTheStoredContracts(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		admin := b.client(t, false, nil)
		apply := func(lease string) {
			set, err := contract.Parse([]byte("version: 1\nkinds:\n  short: {lease: " + lease + "}\n"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := admin.ContractsApply(b.ctx, set); err != nil {
				t.Fatal(err)
			}
		}
		apply("30s")
		c := b.client(t, false, nil)
		claim := func(want time.Duration) {
			t.Helper()
			b.insert(t, admin, raw("short", `{}`), nil)
			got, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "default", WorkerID: "w", Max: 1})
			if err != nil || len(got) != 1 {
				t.Fatalf("claim: %d jobs, %v", len(got), err)
			}
			if j := got[0]; !near(*j.LeaseUntil, j.StartedAt.Add(want)) {
				t.Fatalf("claim: leased for %s, want %s", j.LeaseUntil.Sub(*j.StartedAt), want)
			}
			res, err := c.Heartbeat(b.ctx, got[0].ID, skiplock.HeartbeatParams{WorkerID: "w"})
			if err != nil || !near(res.LeaseUntil, time.Now().Add(want)) {
				t.Fatalf("heartbeat: %+v, %v; want lease %s", res, err, want)
			}
		}
		claim(30 * time.Second)
		apply("10m")
		if err := c.RefreshContracts(b.ctx); err != nil { // as ContractsRefresh later would
			t.Fatal(err)
		}
		claim(10 * time.Minute)
	})
}
