package drivertest

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// A rate key's jobs' own start times prove its limit: over any stretch of
// time T between two starts, at most burst + rate × T jobs started, also
// when claims run late in transactions that began earlier (a claim after
// a batch of completions, a claim in the caller's transaction) and while
// several claims race. The bucket refills by the clock that stamps
// started_at.
var _ = add("FlowRateStartsProveLimit", func(e *env) {
	const rate, burst = 20.0, 2.0
	for range 80 {
		e.insert(flowJob("", 0, "r\x1fclock", rate, burst))
	}
	claimIn := func(tx driver.Executor, late time.Duration) ([]*driver.Job, error) {
		time.Sleep(late)
		return tx.JobClaim(e.ctx, driver.ClaimParams{Queue: "default", WorkerID: "w1", Max: 3, DefaultLease: lease, Flow: true})
	}
	claimLate := func(late time.Duration) ([]*driver.Job, error) {
		var got []*driver.Job
		err := driver.InTx(e.ctx, e.d, func(tx driver.ExecutorTx) (err error) {
			got, err = claimIn(tx, late)
			return err
		})
		return got, err
	}
	// A claim 300 ms into its transaction spends the burst; one right
	// after it finds the bucket as that claim left it.
	started, err := claimLate(300 * time.Millisecond)
	if err != nil {
		e.t.Fatalf("claim in a transaction: %v", err)
	}
	next, err := claimIn(e.d, 0)
	if err != nil {
		e.t.Fatalf("claim: %v", err)
	}
	started = append(started, next...)
	// Then three claimers race until 30 jobs started, two of them late in
	// their transactions.
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	more := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(started) < 30 && len(errs) == 0 && e.ctx.Err() == nil
	}
	for w := range 3 {
		wg.Go(func() {
			for i := 0; more(); i++ {
				var got []*driver.Job
				var err error
				if w == 0 {
					got, err = claimIn(e.d, 0)
				} else {
					got, err = claimLate(time.Duration(i*w%4) * 25 * time.Millisecond)
				}
				mu.Lock()
				started = append(started, got...)
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 || len(started) < 30 {
		e.t.Fatalf("%d jobs started; claims: %v %v", len(started), errs, e.ctx.Err())
	}
	if err := rateBound(started, rate, burst); err != nil {
		e.t.Fatal(err)
	}
})

// rateBound checks that between any two starts, s and t, at most burst +
// rate × (t - s) jobs started (both ends counted).
func rateBound(jobs []*driver.Job, rate, burst float64) error {
	at := make([]time.Time, len(jobs))
	for i, j := range jobs {
		if j.StartedAt == nil {
			return fmt.Errorf("job %d claimed without started_at", j.ID)
		}
		at[i] = *j.StartedAt
	}
	slices.SortFunc(at, time.Time.Compare)
	for i := range at {
		for k := i; k < len(at); k++ {
			span := at[k].Sub(at[i])
			if n := float64(k - i + 1); n > burst+rate*span.Seconds()+1e-6 {
				return fmt.Errorf("%v jobs started within %s (from %s), over the bound of %v + %v a second",
					n, span, at[i].Format(time.RFC3339Nano), burst, rate)
			}
		}
	}
	return nil
}
