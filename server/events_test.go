package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// events opens an event stream and answers its job events.
func events(t *testing.T, b *bundle, query, token string) <-chan map[string]any {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", b.ts.URL+"/v1/events"+query, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	out := make(chan map[string]any, 1000)
	go func() {
		defer res.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(res.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "job":
				var e map[string]any
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e); err == nil {
					out <- e
				}
			}
		}
	}()
	return out
}

// waitEvent answers the first event that matches, failing after a minute.
func waitEvent(t *testing.T, ch <-chan map[string]any, match func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				t.Fatal("event stream ended")
			}
			if match(e) {
				return e
			}
		case <-deadline:
			t.Fatal("no matching event")
		}
	}
}

func TestEvents(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		b := setup(t, db, nil)
		admin := createToken(t, b.drv, "admin", "")
		tenantA := createToken(t, b.drv, "viewer", "a")
		all := events(t, b, "", admin)
		mail := events(t, b, "?queue=mail", admin)
		scoped := events(t, b, "", tenantA)

		other := must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"x","queue":"other","tenant":"b"}`), 201).job()
		j := must(t, b.do(t, "POST", "/v1/jobs", admin, `{"kind":"send","queue":"mail","tenant":"a","workflow_id":"wf"}`), 201).job()
		is := func(id int64, state string) func(map[string]any) bool {
			return func(e map[string]any) bool { return e["id"] == float64(id) && e["state"] == state }
		}
		e := waitEvent(t, all, is(id(j), "pending"))
		if e["kind"] != "send" || e["queue"] != "mail" || e["workflow_id"] != "wf" {
			t.Fatalf("event: %v", e)
		}
		must(t, b.do(t, "POST", "/v1/queues/mail/claim", admin, `{"worker_id":"w"}`), 200)
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/heartbeat", id(j)), admin, `{"worker_id":"w","progress":50,"progress_message":"half"}`), 200)
		e = waitEvent(t, mail, func(e map[string]any) bool { return e["id"] == float64(id(j)) && e["progress"] == 50.0 })
		if e["progress_message"] != "half" || e["state"] != "running" {
			t.Fatalf("progress event: %v", e)
		}
		must(t, b.do(t, "POST", fmt.Sprintf("/v1/jobs/%d/complete", id(j)), admin, `{"worker_id":"w"}`), 200)
		waitEvent(t, all, is(id(j), "completed"))
		// The filtered and the scoped streams saw this job's end and never
		// the other queue's or tenant's job.
		for name, ch := range map[string]<-chan map[string]any{"queue=mail": mail, "tenant a": scoped} {
			waitEvent(t, ch, func(e map[string]any) bool {
				if e["id"] == float64(id(other)) {
					t.Fatalf("%s stream got the other job: %v", name, e)
				}
				return is(id(j), "completed")(e)
			})
		}
	})
}
