package bench

import (
	"testing"
	"time"
)

// Worker processes' claim times add up: the sum of two processes' lines
// answers the percentiles of all their claims, within a bucket's 2%.
func TestClaimHistMergesProcesses(t *testing.T) {
	var a, b, sum ClaimHist
	for i := range 98 {
		a.Add(time.Duration(i+1) * time.Millisecond)
	}
	b.Add(500 * time.Millisecond)
	b.Add(2 * time.Second)
	for _, h := range []*ClaimHist{&a, &b} {
		if err := sum.Merge(h.String()); err != nil {
			t.Fatal(err)
		}
	}
	if got := sum.Count(); got != 100 {
		t.Fatalf("count %d, want 100", got)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50 * time.Millisecond}, {0.99, 500 * time.Millisecond}, {1, 2 * time.Second}} {
		got := sum.Percentile(c.q)
		if got < c.want || float64(got) > 1.021*float64(c.want) {
			t.Errorf("p%g = %s, want %s to 2%% above", 100*c.q, got, c.want)
		}
	}
	if err := sum.Merge("claims 3:x"); err == nil {
		t.Error("a bad pair merged")
	}
	var none ClaimHist
	if none.Percentile(0.99) != 0 || none.String() != ClaimsLine {
		t.Errorf("empty: p99 %s, line %q", none.Percentile(0.99), none.String())
	}
}
