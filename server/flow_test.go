package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// An HTTP claim honours a concurrency key and a rate limit; GET /v1/queues
// shows the rules and their use.
func TestFlowOverHTTP(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		rules := []skiplock.FlowRule{
			{Name: "per-host", Queue: "crawl", Key: "payload.host", Concurrency: 1},
			{Name: "slow", Queue: "mail", Rate: 2, Per: time.Hour},
		}
		b := setupClient(t, db.open(t), &skiplock.Config{Flow: rules}, nil)
		for _, host := range []string{"a", "a", "b"} {
			must(t, b.do(t, "POST", "/v1/jobs", "", map[string]any{"kind": "fetch", "queue": "crawl",
				"payload": map[string]any{"host": host}}), 201)
		}
		for range 3 {
			must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"send","queue":"mail"}`), 201)
		}
		claim := func(queue string) []map[string]any {
			return must(t, b.do(t, "POST", "/v1/queues/"+queue+"/claim", "", `{"worker_id":"w","max":10}`), 200).jobs()
		}
		if jobs := claim("crawl"); len(jobs) != 2 {
			t.Fatalf("crawl claim: %d jobs, want one per host", len(jobs))
		}
		if jobs := claim("crawl"); len(jobs) != 0 {
			t.Fatalf("second crawl claim: %d jobs, want none: host a is full", len(jobs))
		}
		if jobs := claim("mail"); len(jobs) != 2 {
			t.Fatalf("mail claim: %d jobs, want the burst of 2", len(jobs))
		}
		if jobs := claim("mail"); len(jobs) != 0 {
			t.Fatalf("second mail claim: %d jobs, want none until a token refills", len(jobs))
		}
		queues := maps(must(t, b.do(t, "GET", "/v1/queues", "", nil), 200).body["queues"])
		flows := map[string]map[string]any{}
		for _, q := range queues {
			for _, f := range maps(q["flow"]) {
				flows[q["name"].(string)+"/"+f["rule"].(string)] = f
			}
			if q["name"] == "crawl" && q["counts"].(map[string]any)["pending"] != float64(1) {
				t.Fatalf("crawl counts: %v", q["counts"])
			}
		}
		host := flows["crawl/per-host"]
		if host == nil || host["concurrency"] != float64(1) || host["running"] != float64(2) || host["keys"] != float64(2) ||
			host["key"] != "payload.host" {
			t.Fatalf("crawl's flow: %v", host)
		}
		mail := flows["mail/slow"]
		if mail == nil || mail["rate"] != float64(2) || mail["per_seconds"] != float64(3600) || mail["running"] != float64(0) {
			t.Fatalf("mail's flow: %v", mail)
		}
		busy := maps(mail["busy"])
		if len(busy) != 1 || busy[0]["tokens"].(float64) >= 1 {
			t.Fatalf("mail's bucket: %v", busy)
		}
		metrics := string(must(t, b.do(t, "GET", "/metrics", "", nil), 200).raw)
		for _, want := range []string{`skiplock_flow_running{queue="crawl",rule="per-host"} 2`,
			`skiplock_flow_concurrency_limit{queue="crawl",rule="per-host"} 1`, `skiplock_flow_keys{queue="mail",rule="slow"} 1`} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}
