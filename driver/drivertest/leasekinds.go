package drivertest

import (
	"time"

	"github.com/skiplock/skiplock/driver"
)

// A claim of any kind (an external worker's) still gives each kind its
// lease: LeaseKinds names the leases apart from the kinds filter.
var _ = add("ClaimAnyKindLeasePerKind", func(e *env) {
	short, long, other := e.insert(job("short")), e.insert(job("long")), e.insert(job("other"))
	got := e.claim(driver.ClaimParams{LeaseKinds: []string{"short", "long"},
		Leases: []time.Duration{30 * time.Second, 10 * time.Minute}, DefaultLease: time.Minute})
	want := map[int64]time.Duration{short.ID: 30 * time.Second, long.ID: 10 * time.Minute, other.ID: time.Minute}
	if len(got) != 3 {
		e.t.Fatalf("claimed %v", ids(got))
	}
	for _, j := range got {
		if !near(*j.LeaseUntil, j.StartedAt.Add(want[j.ID]), time.Second) {
			e.t.Fatalf("job %s: lease %s, want %s", j.Kind, j.LeaseUntil.Sub(*j.StartedAt), want[j.ID])
		}
	}
})

// A progress report extends the lease by its kind's entry, else by Lease.
var _ = add("ProgressLeasePerKind", func(e *env) {
	short := e.claimID(e.insert(job("short")), "w1", 2*time.Second)
	other := e.claimID(e.insert(job("other")), "w1", 2*time.Second)
	kinds, leases := []string{"short", "long"}, []time.Duration{30 * time.Second, 10 * time.Minute}
	for j, want := range map[*driver.Job]time.Duration{short: 30 * time.Second, other: time.Hour} {
		h, err := e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: held(j), Lease: time.Hour,
			LeaseKinds: kinds, Leases: leases})
		if err != nil || !near(h.LeaseUntil, time.Now().Add(want), 10*time.Second) {
			e.t.Fatalf("progress of %s: %+v, %v; want lease %s", j.Kind, h, err, want)
		}
	}
})
