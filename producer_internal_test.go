package skiplock

import (
	"testing"
	"time"
)

// TestCooldownAfterEmptyClaims: a claim waits FetchCooldown after the last,
// also after one claim that found nothing, and ten times that after two or
// more in a row that found nothing.
func TestCooldownAfterEmptyClaims(t *testing.T) {
	p := &producer{client: &Client{config: Config{FetchCooldown: 100 * time.Microsecond}}}
	for _, c := range []struct {
		empty int
		want  time.Duration
	}{{0, 100 * time.Microsecond}, {1, 100 * time.Microsecond}, {2, time.Millisecond}, {7, time.Millisecond}} {
		if got := p.cooldown(c.empty); got != c.want {
			t.Errorf("after %d empty claims in a row: cooldown %s, want %s", c.empty, got, c.want)
		}
	}
}
