package bench

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ClaimsLine is the prefix of the line by which a worker process reports
// how long its claim calls took (ClaimHist.String), when it stops.
const ClaimsLine = "claims "

// histStep is the ratio of one bucket's bound to the one below: a
// percentile is known within 2%.
const histStep = 1.02

// ClaimHist counts durations in buckets of 2% width, so that processes'
// counts add up and percentiles come out of the sum.
type ClaimHist struct {
	mu     sync.Mutex
	counts map[int]int64
}

// Add counts one duration.
func (h *ClaimHist) Add(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		h.counts = map[int]int64{}
	}
	h.counts[bucketOf(d)]++
}

func bucketOf(d time.Duration) int {
	us := max(float64(d)/float64(time.Microsecond), 1)
	return int(math.Log(us) / math.Log(histStep))
}

// Count answers how many durations were counted.
func (h *ClaimHist) Count() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	var n int64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// Percentile answers the upper bound of the bucket that holds the
// q-quantile; 0 when nothing was counted.
func (h *ClaimHist) Percentile(q float64) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	var total int64
	for _, c := range h.counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(total)))
	var seen int64
	for _, b := range slices.Sorted(maps.Keys(h.counts)) {
		if seen += h.counts[b]; seen >= rank {
			return time.Duration(math.Pow(histStep, float64(b+1)) * float64(time.Microsecond))
		}
	}
	return 0
}

// String is the line a worker process prints: ClaimsLine, then
// bucket:count pairs.
func (h *ClaimHist) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	b.WriteString(ClaimsLine)
	for i, k := range slices.Sorted(maps.Keys(h.counts)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%d", k, h.counts[k])
	}
	return b.String()
}

// Merge adds the counts of a line String printed.
func (h *ClaimHist) Merge(line string) error {
	rest, ok := strings.CutPrefix(line, ClaimsLine)
	if !ok {
		return fmt.Errorf("not a claims line: %q", line)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		h.counts = map[int]int64{}
	}
	for _, pair := range strings.Fields(rest) {
		k, v, ok := strings.Cut(pair, ":")
		b, err1 := strconv.Atoi(k)
		n, err2 := strconv.ParseInt(v, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return fmt.Errorf("claims line: bad pair %q", pair)
		}
		h.counts[b] += n
	}
	return nil
}
