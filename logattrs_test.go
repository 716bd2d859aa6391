package skiplock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
)

// Every log line about a job carries job_id, kind, queue, attempt and, when
// the job carries a traceparent, trace_id.
func TestJobLogLinesCarryJobAndTrace(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var buf bytes.Buffer
			log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			c := hookClient(t, open(t), func(context.Context, *skiplock.Job[sleepArgs]) error {
				return skiplock.Permanent(errors.New("nope"))
			}, func(cfg *skiplock.Config) { cfg.Logger = log })
			const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			res, err := c.Insert(ctx, sleepArgs{}, &skiplock.InsertOpts{Queue: "default",
				Metadata: []byte(`{"traceparent":"` + tp + `"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if skiplock.TraceID(res.Job) != tp[3:35] {
				t.Fatalf("TraceID %q", skiplock.TraceID(res.Job))
			}
			if _, err := c.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			var line map[string]any
			for _, l := range strings.Split(buf.String(), "\n") {
				if strings.Contains(l, `"job failed"`) {
					if err := json.Unmarshal([]byte(l), &line); err != nil {
						t.Fatal(err)
					}
				}
			}
			want := map[string]any{"job_id": float64(res.Job.ID), "kind": "sleep", "queue": "default", "attempt": float64(1),
				"trace_id": tp[3:35], "error": "permanent: nope"}
			for k, v := range want {
				if line[k] != v {
					t.Fatalf("line %v: %s is %v, want %v", line, k, line[k], v)
				}
			}
		})
	}
}
