package skiplock

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// claimPlace remembers where the claims of one queue (and one set of kinds
// and tenant) ended. Claims start after that place, and from the head of the
// queue again once headEvery has passed since the last head claim.
type claimPlace struct {
	mu       sync.Mutex
	floor    *driver.ClaimKey
	lastHead time.Time
	headCost time.Duration
}

// headEvery is how long after a claim from the head of the queue the next
// one is due. Until then claims start after the place: a job that lands
// before it (a higher priority, a promoted or rescued job, a row that was
// locked) waits for the first claim after that. A head claim costs a
// millisecond or so, but every entry of an already claimed job that vacuum
// has not yet removed adds to it, and a long transaction elsewhere keeps
// them all. The interval is 20 times the last head claim's cost, so that
// head claims take a twentieth of the time, and never past maxHeadEvery: a
// head claim slowed by something else (a new connection, a lock waited for,
// a pause of the machine) does not keep such a job waiting longer. A head
// claim that costs more than maxHeadEvery/20 (250 ms) takes a larger share.
func headEvery(cost time.Duration) time.Duration { return min(20*cost, maxHeadEvery) }

const maxHeadEvery = 5 * time.Second

// claim claims with p through claim (a driver's JobClaim, or a statement
// that claims as it does), starting after the place unless a head claim is
// due, and moves the place to the last job claimed.
func (cp *claimPlace) claim(ctx context.Context, claim func(context.Context, driver.ClaimParams) ([]*driver.Job, error), p driver.ClaimParams) ([]*JobRow, error) {
	if p.Fair != nil {
		return claim(ctx, p) // it starts at each tenant's head
	}
	cp.mu.Lock()
	head := cp.floor == nil || time.Since(cp.lastHead) >= headEvery(cp.headCost)
	if !head {
		p.After = cp.floor
	}
	cp.mu.Unlock()
	start := time.Now()
	jobs, err := claim(ctx, p)
	if err != nil {
		return nil, err
	}
	var last driver.ClaimKey // a value: a pointer taken per row escapes per row
	for i, row := range jobs {
		if k := row.Key(); i == 0 || last.Before(k) {
			last = k
		}
	}
	cp.mu.Lock()
	if head {
		cp.lastHead, cp.headCost = time.Now(), time.Since(start)
	}
	if len(jobs) > 0 {
		cp.floor = &last
	}
	cp.mu.Unlock()
	return jobs, nil
}

// claimPlaces are the places of the claims made through Client.Claim (the
// HTTP workers), by queue, tenant and kinds. Past maxClaimPlaces the map
// starts over: a forgotten place costs one claim from the head.
type claimPlaces struct {
	mu     sync.Mutex
	places map[string]*claimPlace
}

const maxClaimPlaces = 1024

func (cps *claimPlaces) of(queue string, tenant *string, kinds []string) *claimPlace {
	k := slices.Clone(kinds)
	slices.Sort(k)
	t := "\x00" // no tenant scope
	if tenant != nil {
		t = *tenant
	}
	key := queue + "\x00" + t + "\x00" + strings.Join(k, "\x00")
	cps.mu.Lock()
	defer cps.mu.Unlock()
	if cps.places == nil || len(cps.places) >= maxClaimPlaces && cps.places[key] == nil {
		cps.places = map[string]*claimPlace{}
	}
	cp := cps.places[key]
	if cp == nil {
		cp = &claimPlace{}
		cps.places[key] = cp
	}
	return cp
}
