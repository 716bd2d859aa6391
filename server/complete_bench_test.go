package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// BenchmarkHTTPClaimComplete measures one HTTP worker's round: claim a job
// and complete it, naming its attempt, over a real HTTP server. The job is
// inserted outside the timed part. Rerun:
//
//	go test ./server -run '^$' -bench HTTPClaimComplete -benchtime 2000x
func BenchmarkHTTPClaimComplete(b *testing.B) {
	for _, db := range []struct {
		name string
		open func(testing.TB) driver.Driver
	}{
		{"sqlite", func(tb testing.TB) driver.Driver { return sqlitetest.New(tb) }},
		{"postgres", func(tb testing.TB) driver.Driver { d, _ := pgtest.Schema(tb); return d }},
	} {
		b.Run(db.name, func(b *testing.B) {
			bu := setupClient(b, db.open(b), &skiplock.Config{}, nil)
			ctx := context.Background()
			for b.Loop() {
				b.StopTimer()
				if _, err := bu.client.Insert(ctx, skiplock.RawArgs{KindName: "bench"}, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				a, err := doRequest(bu.ts.URL, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w"}`)
				if err != nil || a.status != 200 || len(a.jobs()) != 1 {
					b.Fatalf("claim: %v %d %s", err, a.status, a.raw)
				}
				j := a.jobs()[0]
				body := fmt.Sprintf(`{"worker_id":"w","attempt":%v,"result":{"ok":true}}`, j["attempt"])
				a, err = doRequest(bu.ts.URL, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(j)), "", body)
				if err != nil || a.status != 200 {
					b.Fatalf("complete: %v %d %s", err, a.status, a.raw)
				}
			}
		})
	}
}
