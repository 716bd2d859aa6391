package dashboard

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
)

// failOnce inserts a job of kind with maxRetries, claims it and fails its
// first attempt, retryable or not.
func (b *handlerBundle) failOnce(kind string, maxRetries int, retryable bool) *skiplock.JobRow {
	b.t.Helper()
	ctx := context.Background()
	res, err := b.client.Insert(ctx, skiplock.RawArgs{KindName: kind, Payload: []byte(`{}`)},
		&skiplock.InsertOpts{Queue: "q-" + kind, MaxRetries: &maxRetries})
	if err != nil {
		b.t.Fatal(err)
	}
	if _, err := b.client.Claim(ctx, skiplock.ClaimParams{Queue: "q-" + kind, WorkerID: "w", Max: 1}); err != nil {
		b.t.Fatal(err)
	}
	j, err := b.client.Fail(ctx, res.Job.ID, skiplock.FailParams{WorkerID: "w", ErrorType: "exit_1",
		Message: "exit status 1", Retryable: retryable})
	if err != nil {
		b.t.Fatal(err)
	}
	return j
}

// TestHandlerAttempts: a job page and the jobs list count attempts as the
// CLI does ("attempt N of M", M = max_retries + 1), the page explains max
// retries, a failure on the last attempt reads "retries exhausted" and
// only one that refused a retry with retries left "not retryable"; after
// a retry the page shows no start or heartbeat of the attempt before.
func TestHandlerAttempts(t *testing.T) {
	b := setup(t)
	page := func(id int64) string {
		t.Helper()
		rec := b.do("GET", "/jobs/"+itoa(id), "admin", nil)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /jobs/%d: %d %s", id, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	want := func(what, body string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(body, p) {
				t.Errorf("%s: the page lacks %q", what, p)
			}
		}
	}
	last := b.failOnce("last", 0, true)
	body := page(last.ID)
	want("failed on its last attempt", body, `<dd id="attempt-of">attempt 1 of 1</dd>`, "runs allowed in all: 1",
		`<span class="end">retries exhausted</span>`, `id="heartbeat"`)
	if strings.Contains(body, "not retryable") {
		t.Error("a failure on the last attempt reads not retryable")
	}
	perm := b.failOnce("perm", 3, false)
	want("refused a retry with retries left", page(perm.ID), `<dd id="attempt-of">attempt 1 of 4</dd>`,
		`<span class="end">not retryable</span>`)
	again := b.failOnce("again", 3, true)
	want("retried after its backoff", page(again.ID), `<dd id="attempt-of">next attempt 2 of 4</dd>`,
		`<span class="end">retried</span>`, `<dd id="started">—</dd>`)

	if _, err := b.client.JobRetry(context.Background(), last.ID); err != nil {
		t.Fatal(err)
	}
	body = page(last.ID)
	want("retried by hand", body, `<dd id="attempt-of">next attempt 2 of 2</dd>`, `<dd id="started">—</dd>`,
		`<span class="end">failed the job</span>`)
	if strings.Contains(body, `id="heartbeat"`) || strings.Contains(body, `id="lease"`) {
		t.Error("a retried job's page shows the heartbeat or lease of the attempt before")
	}
	rec := b.do("GET", "/jobs?kind=perm", "admin", nil)
	if !strings.Contains(rec.Body.String(), `<td class="num">1/4</td>`) {
		t.Errorf("the jobs list does not count attempts as 1/4 (attempts made / runs allowed):\n%s", rec.Body)
	}
}
