package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestRunModes runs each mode briefly on both databases: the harness works
// and leaves nothing behind. It asserts no speed.
func TestRunModes(t *testing.T) {
	for _, db := range []struct{ name, url string }{{"postgres", pgtest.URL()}, {"sqlite", ""}} {
		for _, o := range []Options{
			{Mode: "drain", Jobs: 300, Batch: 100},
			{Mode: "drain", Jobs: 300, Batch: 100, AfterIdle: true},
			{Mode: "insert", Jobs: 300, Batch: 100, Producers: 2},
			{Mode: "e2e", Duration: 3 * time.Second, Batch: 50, Scheduled: 10},
			{Mode: "latency", Duration: time.Second, Rate: 20},
		} {
			name := db.name + "/" + o.Mode
			if o.AfterIdle {
				name += "-after-idle"
			}
			t.Run(name, func(t *testing.T) {
				o.DatabaseURL = db.url
				res, err := Run(t.Context(), o)
				if err != nil {
					t.Fatal(err)
				}
				line := res.Line()
				if !strings.HasPrefix(line, "result mode="+o.Mode+" jobs=") || !strings.Contains(line, " p99_ms=") {
					t.Errorf("result line %q", line)
				}
				if res.Jobs <= 0 {
					t.Errorf("%s worked no jobs: %s", o.Mode, line)
				}
			})
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		o    Options
		flag string
	}{
		{Options{Mode: "fast"}, "--mode"},
		{Options{Mode: "drain", Workers: 20000}, "--workers"},
		{Options{Mode: "latency", Rate: -1}, "--rate"},
		{Options{Mode: "drain", Backlog: 10}, "--backlog"},
		{Options{Mode: "e2e", AfterIdle: true}, "--after-idle"},
	} {
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c.o, err, c.flag)
		}
	}
}
