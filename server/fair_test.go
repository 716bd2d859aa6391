package server_test

import (
	"fmt"
	"testing"

	"github.com/skiplock/skiplock"
)

// TestClaimOverHTTPIsFair: with fairness on for a queue, HTTP workers'
// claims share it between tenants: a tenant that enqueued 50 jobs does not
// wait behind one that enqueued 500 before it.
func TestClaimOverHTTPIsFair(t *testing.T) {
	t.Parallel()
	eachDB(t, func(t *testing.T, db database) {
		b := setupClient(t, db.open(t), &skiplock.Config{
			Fairness: map[string]skiplock.Fairness{"default": {}}}, nil)
		enqueue := func(tenant string, n int) {
			body := `{"jobs": [`
			for i := range n {
				if i > 0 {
					body += ","
				}
				body += fmt.Sprintf(`{"kind": "k", "tenant": %q}`, tenant)
			}
			must(t, b.do(t, "POST", "/v1/jobs/batch", "", body+"]}"), 201)
		}
		enqueue("big", 500)
		enqueue("small", 50)
		n := map[string]int{}
		for _, j := range must(t, b.do(t, "POST", "/v1/queues/default/claim", "", `{"worker_id":"w","max":100}`), 200).jobs() {
			n[j["tenant"].(string)]++
		}
		if n["big"] != 50 || n["small"] != 50 {
			t.Fatalf("a claim of 100 took %v, want 50 of each tenant", n)
		}
	})
}
