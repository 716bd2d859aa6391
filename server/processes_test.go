package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/testwait"
)

// GET /v1/processes lists the started client serving the API and an HTTP
// worker with the job it claimed.
func TestProcessesEndpoint(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setupClient(t, db.open(t), &skiplock.Config{ID: "api-server", LeaderTTL: time.Second}, nil)
		if err := b.client.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.client.Stop(context.Background()) })
		id := must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"resize","queue":"img"}`), 201).job()["id"]
		claimed := must(t, b.do(t, "POST", "/v1/queues/img/claim", "", `{"worker_id":"py-worker-1","max":1}`), 200).jobs()
		if len(claimed) != 1 {
			t.Fatalf("claimed %v", claimed)
		}
		var list []map[string]any
		testwait.Until(t, 20*time.Second, "the server and the worker listed", func() bool {
			a := must(t, b.do(t, "GET", "/v1/processes", "", nil), 200)
			list = maps(a.body["processes"])
			return len(list) == 2
		})
		srv, w := list[0], list[1]
		if srv["id"] != "api-server" || srv["kind"] != "client" || srv["version"] != skiplock.Version() ||
			srv["started_at"] == nil || srv["running_count"] != 0.0 {
			t.Fatalf("server %v", srv)
		}
		running := maps(w["running"])
		if w["id"] != "py-worker-1" || w["kind"] != "http_worker" || w["started_at"] != nil || w["running_count"] != 1.0 ||
			len(running) != 1 || running[0]["id"] != id || running[0]["kind"] != "resize" || w["heartbeat_at"] == nil {
			t.Fatalf("worker %v", w)
		}
	})
}
