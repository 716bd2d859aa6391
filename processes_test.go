package skiplock_test

import (
	"testing"

	"github.com/skiplock/skiplock"
)

// ProcessList answers a started client with its version and start, and
// an HTTP worker with the job it holds; a stopped client leaves the list.
func TestProcessListClientsAndHTTPWorkers(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c := b.client(t, true, func(cfg *skiplock.Config) { cfg.ID = "proc-server" })
		j := b.insert(t, c, taskArgs{}, &skiplock.InsertOpts{Queue: "procs"})
		if jobs, err := c.Claim(b.ctx, skiplock.ClaimParams{Queue: "procs", WorkerID: "http-w", Max: 1}); err != nil || len(jobs) != 1 {
			t.Fatalf("claim: %d jobs, %v", len(jobs), err)
		}
		var ps *skiplock.Processes
		eventually(t, "the client and the HTTP worker listed", func() bool {
			var err error
			if ps, err = c.ProcessList(b.ctx); err != nil {
				t.Fatal(err)
			}
			return len(ps.Processes) == 2
		})
		cl, w := ps.Processes[0], ps.Processes[1]
		if cl.ID != "proc-server" || cl.Kind != skiplock.ProcessClient || cl.Version != skiplock.Version() ||
			cl.PID == 0 || cl.StartedAt.IsZero() || cl.HeartbeatAt.IsZero() || len(cl.Jobs) != 0 {
			t.Fatalf("client %+v", cl)
		}
		if w.ID != "http-w" || w.Kind != skiplock.ProcessHTTPWorker || len(w.Jobs) != 1 || w.Jobs[0].ID != j.ID ||
			w.HeartbeatAt.IsZero() || !w.StartedAt.IsZero() {
			t.Fatalf("HTTP worker %+v", w)
		}
		if ps.Running != 1 || ps.Capped {
			t.Fatalf("running %d, capped %v", ps.Running, ps.Capped)
		}
		if err := c.Stop(b.ctx); err != nil {
			t.Fatal(err)
		}
		if ps, err := c.ProcessList(b.ctx); err != nil || len(ps.Processes) != 1 || ps.Processes[0].ID != "http-w" {
			t.Fatalf("after Stop: %+v, %v; want the HTTP worker only", ps, err)
		}
	})
}
