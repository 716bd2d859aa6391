package dashboard_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skiplock/skiplock/internal/testwait"
)

// dashboardHistory: the overview draws the history of attempts as they
// ended (an HTTP worker's completion and failure), over 1h, 24h and 7d
// picked from its range links; retrying the failed job by hand leaves the
// failures drawn as they were.
func dashboardHistory(t *testing.T, b *browser, s *served, admin string) {
	t.Helper()
	b.login(admin)
	done := s.enqueue(admin, map[string]any{"kind": "charted", "queue": "hist"})
	s.claim(admin, "hist", "w-hist")
	s.api(admin, "POST", fmt.Sprintf("/v1/jobs/%d/complete", done.ID), map[string]any{"worker_id": "w-hist"}, nil)
	f := s.failed(admin, "charted")
	bars := func(class string) int {
		return eval[int](b, fmt.Sprintf(`document.querySelectorAll("#chart-throughput rect.%s").length`, class))
	}
	// The server writes the history every few seconds: reload until drawn.
	testwait.Until(t, 30*time.Second, "the overview to chart a completion and a failure", func() bool {
		b.do("open the overview", b.open("/?range=1h"), chromedp.WaitVisible(chromedp.ID("charts")))
		return bars("ok") > 0 && bars("bad") > 0
	})
	for _, id := range []string{"failure-rate", "wait", "run"} {
		if !b.has(fmt.Sprintf("#chart-%s rect, #chart-%s circle", id, id)) {
			t.Fatalf("the %s chart draws nothing", id)
		}
	}
	b.waitText(".tiles", "failure rate")
	titles := func(class string) string {
		return eval[string](b, fmt.Sprintf(`[...document.querySelectorAll("#chart-throughput rect.%s title")].map(e => e.textContent).join("|")`, class))
	}
	// completeAndSee completes one more job and waits until the overview
	// draws it: every attempt that ended before it was written by then.
	completeAndSee := func() {
		t.Helper()
		okBars := titles("ok")
		more := s.enqueue(admin, map[string]any{"kind": "charted", "queue": "hist"})
		s.claim(admin, "hist", "w-hist")
		s.api(admin, "POST", fmt.Sprintf("/v1/jobs/%d/complete", more.ID), map[string]any{"worker_id": "w-hist"}, nil)
		testwait.Until(t, 30*time.Second, "the overview to chart one more completion", func() bool {
			b.do("reload the overview", b.open("/?range=1h"), chromedp.WaitVisible(chromedp.ID("charts")))
			return titles("ok") != okBars
		})
	}
	completeAndSee()
	failedBars := titles("bad")
	s.api(admin, "POST", fmt.Sprintf("/v1/jobs/%d/retry", f.ID), nil, nil)
	completeAndSee()
	if got := titles("bad"); got != failedBars {
		t.Fatalf("failures drawn before a retry %q, after %q", failedBars, got)
	}
	b.screenshot("overview-history")
	for _, r := range []string{"24h", "7d", "1h"} {
		b.click(fmt.Sprintf(`#ranges a[href="/?range=%s"]`, r))
		b.waitText(`#ranges a[aria-current]`, r)
		b.waitText("#charts h2", "last "+r)
		if bars("ok") == 0 {
			t.Fatalf("range %s: no completion drawn", r)
		}
	}
}
