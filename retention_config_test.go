package skiplock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// A retention shorter than the floor is refused when the client is made,
// naming the field: the janitor would refuse every run and the archive
// would grow for good.
func TestRetentionBelowTheFloorIsRefused(t *testing.T) {
	t.Parallel()
	day := 24 * time.Hour
	for _, c := range []struct {
		r    skiplock.Retention
		want string // "" accepted
	}{
		{skiplock.Retention{Completed: 6 * time.Hour}, "config: Retention.Completed: 6h0m0s is shorter than Retention.Floor (24h0m0s)"},
		{skiplock.Retention{Cancelled: time.Hour, Floor: 2 * time.Hour}, "config: Retention.Cancelled: 1h0m0s is shorter than Retention.Floor (2h0m0s)"},
		{skiplock.Retention{Rules: []skiplock.RetentionRule{{State: skiplock.StateFailed, Kind: "probe", Keep: time.Hour}}},
			"config: Retention.Rules[0].Keep: 1h0m0s is shorter than Retention.Floor (24h0m0s)"},
		{skiplock.Retention{Completed: 6 * time.Hour, Floor: 6 * time.Hour}, ""},
		{skiplock.Retention{Completed: day, Failed: skiplock.KeepForever}, ""},
		{skiplock.Retention{Completed: time.Hour, Disabled: true}, ""},
	} {
		c := c
		_, err := skiplock.NewClient(sqlitetest.New(t), &skiplock.Config{Retention: c.r})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v, want accepted", c.r, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %s…", c.r, err, c.want)
		}
	}
}
