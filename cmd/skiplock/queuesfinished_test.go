package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// `queues list` lists a queue whose every job completed, with no live
// jobs, in its table and in --json.
func TestCLIQueuesListFinishedOnly(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			ctx := context.Background()
			db, err := dbopen.OpenExisting(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			c, err := skiplock.NewClient(db.Driver, &skiplock.Config{})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if _, err := c.Insert(ctx, skiplock.RawArgs{KindName: "email", Payload: json.RawMessage(`{}`)},
					&skiplock.InsertOpts{Queue: "mail"}); err != nil {
					t.Fatal(err)
				}
			}
			jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: "mail", WorkerID: "w", Max: 3})
			if err != nil || len(jobs) != 3 {
				t.Fatalf("claim: %d jobs, %v", len(jobs), err)
			}
			for _, j := range jobs {
				if _, _, err := c.Complete(ctx, j.ID, skiplock.CompleteParams{WorkerID: "w"}); err != nil {
					t.Fatal(err)
				}
			}
			db.Close()
			r := runCLI(t, url, "queues", "list")
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], "mail ") {
				t.Fatalf("queues list: %+v", r)
			}
			r = runCLI(t, url, "queues", "list", "--json")
			var out struct {
				Queues []struct {
					Name   string
					Counts map[string]int
				}
			}
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out.Queues) != 1 ||
				out.Queues[0].Name != "mail" || out.Queues[0].Counts["pending"] != 0 {
				t.Fatalf("queues list --json: %+v (%v)", r, err)
			}
		})
	}
}
