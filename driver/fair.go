package driver

import (
	"cmp"
	"math"
	"slices"
)

// FairShare shares a claim between the tenants that have pending jobs in
// the queue (ClaimParams.Fair), so that a tenant with a large backlog
// cannot starve one with a few jobs.
//
// Each tenant present gets a share of Max in proportion to its weight,
// ceil(Max·w/W) with W the sum of the weights present, taken from its own
// jobs in claim order (priority stays strict inside a tenant). A tenant
// with fewer jobs than its share leaves the rest to the tenants that
// filled theirs. The jobs taken are merged in virtual time, a tenant's
// n-th job at (h+n-1)/w with h drawn for each tenant and claim from the
// exponential distribution (FairHead), and the first Max are claimed: a
// claim of one job goes to a tenant with probability w/W, and a claim of
// many splits about as the weights do.
type FairShare struct {
	// Tenants and Weights (same index) weigh tenants apart; any other
	// tenant weighs 1.
	Tenants []string
	Weights []int
}

// Weight answers tenant's weight.
func (f *FairShare) Weight(tenant string) int {
	if i := slices.Index(f.Tenants, tenant); i >= 0 {
		return f.Weights[i]
	}
	return 1
}

// Share answers a tenant's share of max when its weight is w of the
// weights total present.
func Share(max, w, total int) int {
	return int(math.Ceil(float64(max) * float64(w) / float64(total)))
}

// FairHead draws a tenant's head start for one claim from u, a uniform
// draw in [0, 1): the least of such draws divided by their weights falls
// to each tenant with probability proportional to its weight.
func FairHead(u float64) float64 { return -math.Log(1 - u) }

// FairTake is what a fair claim took from one tenant: its weight and its
// jobs' ids in claim order.
type FairTake struct {
	Weight int
	IDs    []int64
}

// FairMerge merges the tenants' takes in virtual time (see FairShare) and
// answers the ids of the first max; rnd draws uniformly from [0, 1). For
// drivers that merge in Go; a driver may as well merge in its statement.
func FairMerge(takes []FairTake, max int, rnd func() float64) []int64 {
	type slot struct {
		at float64
		id int64
	}
	var all []slot
	for _, t := range takes {
		h := FairHead(rnd())
		for n, id := range t.IDs {
			all = append(all, slot{(h + float64(n)) / float64(t.Weight), id})
		}
	}
	slices.SortStableFunc(all, func(a, b slot) int { return cmp.Compare(a.at, b.at) })
	ids := make([]int64, 0, min(max, len(all)))
	for _, s := range all[:min(max, len(all))] {
		ids = append(ids, s.id)
	}
	return ids
}
