package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skiplock/skiplock/internal/testwait"
)

// failWith enqueues a job of kind in its own queue and fails it for good
// with an error of type typ and message msg.
func (s *served) failWith(token, kind, typ, msg string) apiJob {
	s.t.Helper()
	queue := fmt.Sprintf("q-%s-%s", kind, typ)
	j := s.enqueue(token, map[string]any{"kind": kind, "queue": queue, "max_retries": 0})
	s.claim(token, queue, "w-fail")
	s.api(token, "POST", fmt.Sprintf("/v1/jobs/%d/fail", j.ID), map[string]any{"worker_id": "w-fail",
		"retryable": false, "error": map[string]any{"type": typ, "message": msg}}, &struct{}{})
	return j
}

// check checks the checkbox sel as a click would, and only once: a click
// retried after a slow answer would uncheck it again.
func (b *browser) check(sel string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return false;
		if (!e.checked) e.click(); return e.checked })()`, sel)
	testwait.Until(b.t, time.Minute, "check "+sel, func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		return err == nil && ok
	})
}

// selected waits until the selection bar counts n jobs, and says what the
// boxes are when it does not.
func (b *browser) selected(n int) {
	b.t.Helper()
	want := fmt.Sprintf("%d selected", n)
	for range 60 {
		if eval[string](b, `document.getElementById("sel-count").textContent`) == want {
			return
		}
		b.do("wait a moment", chromedp.Sleep(500*time.Millisecond))
	}
	b.t.Fatalf("the selection bar says %q, want %q; boxes: %s", eval[string](b, `document.getElementById("sel-count").textContent`), want,
		eval[string](b, `[...document.querySelectorAll('input[name="job"]')].map(e => e.value + ":" + e.checked).join(" ")`))
}

// act submits the selection bar with one of its actions and waits for
// the confirmation page; the submit is sent again while the list is still
// shown (a slow machine may drop a click as a live reload lands).
func (b *browser) act(action string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { if (location.pathname === "/bulk") return true;
		const e = document.querySelector('#sel button[value=%q]'); if (e && !e.disabled) e.click(); return false })()`, action)
	for range 40 {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			cancel()
			return
		}
		_, _ = chromedp.Run(ctx, chromedp.Sleep(time.Second))
		cancel()
	}
	b.t.Fatalf("no confirmation of %s: at %s, the bar says %q, buttons disabled %s", action, eval[string](b, `location.href`),
		eval[string](b, `document.getElementById("sel-count").textContent + " " + !document.getElementById("sel-all-matching").hidden`),
		eval[string](b, `[...document.querySelectorAll("#sel button")].map(e => e.disabled).join(",")`))
}

// confirmBulk confirms the bulk action the page asks about, seeing that it
// counts want jobs, and waits for the list to say it acted on them.
func confirmBulk(b *browser, want int) {
	b.t.Helper()
	b.do("open the confirmation", chromedp.WaitVisible(chromedp.ID("matched")))
	if got := eval[string](b, `document.getElementById("matched").textContent`); got != fmt.Sprint(want) {
		b.t.Fatalf("the confirmation counts %s jobs, want %d (at %s: %s)", got, want, eval[string](b, `location.href`),
			eval[string](b, `document.getElementById("bulk-scope").textContent`))
	}
	b.click("#confirm")
	b.waitText("#flash", fmt.Sprintf("%d of %d", want, want))
}

// dashboardSelection: jobs checked on the list are acted on, and only
// they; "select all matching" on a full page acts on every job of the
// filter, past the page; a finished job is deleted from its page and from
// the list (a live one selected with it is left alone); a dead-letter
// group's retry and delete act on exactly that group (kind, error type and
// message), not the whole kind.
func dashboardSelection(t *testing.T, b *browser, s *served, admin string) {
	t.Helper()
	b.login(admin)
	state := func(id int64) string { return s.job(admin, id).State }

	var picked []apiJob
	for range 3 {
		picked = append(picked, s.enqueue(admin, map[string]any{"kind": "picked", "queue": "pick"}))
	}
	b.do("open the queue's jobs", b.open("/jobs?queue=pick"), chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-id="%d"]`, picked[2].ID))))
	for _, j := range picked[:2] {
		b.check(fmt.Sprintf(`tr[data-id="%d"] input[name="job"]`, j.ID))
	}
	b.selected(2)
	b.screenshot("selection")
	b.act("pause")
	confirmBulk(b, 2)
	if state(picked[0].ID) != "paused" || state(picked[1].ID) != "paused" || state(picked[2].ID) != "pending" {
		t.Fatalf("after pausing 2 selected of 3: %s %s %s", state(picked[0].ID), state(picked[1].ID), state(picked[2].ID))
	}

	// Every job of a filter, past its first page of 50.
	jobs := make([]map[string]any, 51)
	for i := range jobs {
		jobs[i] = map[string]any{"kind": "many", "queue": "many"}
	}
	if st := s.api(admin, "POST", "/v1/jobs/batch", map[string]any{"jobs": jobs}, &struct{}{}); st != http.StatusCreated && st != http.StatusOK {
		t.Fatalf("enqueue a batch: %d", st)
	}
	b.do("open the filter", b.open("/jobs?queue=many"), chromedp.WaitVisible(chromedp.ID("next")))
	b.check("#sel-page")
	b.selected(50)
	b.click("#sel-matching")
	b.do("see all matching selected", chromedp.WaitVisible(chromedp.ID("sel-all-matching")))
	b.act("cancel")
	confirmBulk(b, 51)

	// Delete a finished job from its page.
	gone := s.failWith(admin, "deleted", "boom", "no more")
	b.do("open the finished job", b.open(fmt.Sprintf("/jobs/%d", gone.ID)), chromedp.WaitVisible(chromedp.ID("state")))
	b.click(`button[value="Delete"]`)
	b.waitText("#flash", fmt.Sprintf("deleted job #%d", gone.ID))
	if st := s.api(admin, "GET", fmt.Sprintf("/v1/jobs/%d", gone.ID), nil, nil); st != http.StatusNotFound {
		t.Fatalf("a deleted job answers %d", st)
	}
	// From the list: a finished and a live job selected, only the finished
	// one goes.
	done := s.failWith(admin, "listdel", "boom", "no more")
	live := s.enqueue(admin, map[string]any{"kind": "listdel", "queue": "q-listdel-boom"})
	b.do("open the list", b.open("/jobs?kind=listdel"), chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-id="%d"]`, live.ID))))
	b.check(fmt.Sprintf(`tr[data-id="%d"] input[name="job"]`, done.ID))
	b.check(fmt.Sprintf(`tr[data-id="%d"] input[name="job"]`, live.ID))
	b.selected(2)
	b.act("delete")
	confirmBulk(b, 1)
	if st := s.api(admin, "GET", fmt.Sprintf("/v1/jobs/%d", done.ID), nil, nil); st != http.StatusNotFound || state(live.ID) != "pending" {
		t.Fatalf("after deleting the selection: finished job answers %d, live job %s", st, state(live.ID))
	}

	// Dead letters: two groups of one kind; each group's actions act on it.
	broke := []apiJob{s.failWith(admin, "grouped", "boom", "it broke"), s.failWith(admin, "grouped", "boom", "it broke")}
	timeout := s.failWith(admin, "grouped", "timeout", "upstream took too long")
	groupAct := func(typ, act string) {
		t.Helper()
		b.do("open dead letters", b.open("/dead"), chromedp.WaitVisible(chromedp.ID("dead")))
		if !eval[bool](b, fmt.Sprintf(`(() => { const r = [...document.querySelectorAll("#dead tr")].find(r =>
			r.textContent.includes("grouped") && r.querySelector("b") && r.querySelector("b").textContent === %q);
			if (!r) return false; r.querySelector('a[data-act=%q]').click(); return true })()`, typ, act)) {
			t.Fatalf("no dead-letter group of grouped / %s", typ)
		}
	}
	groupAct("timeout", "retry")
	confirmBulk(b, 1)
	if state(timeout.ID) != "pending" || state(broke[0].ID) != "failed" || state(broke[1].ID) != "failed" {
		t.Fatalf("retrying the timeout group: timeout %s, boom %s %s", state(timeout.ID), state(broke[0].ID), state(broke[1].ID))
	}
	b.screenshot("dead-groups")
	groupAct("boom", "delete")
	confirmBulk(b, 2)
	for _, j := range broke {
		if st := s.api(admin, "GET", fmt.Sprintf("/v1/jobs/%d", j.ID), nil, nil); st != http.StatusNotFound {
			t.Fatalf("job %d of the deleted group answers %d", j.ID, st)
		}
	}
	if state(timeout.ID) != "pending" {
		t.Fatalf("deleting the boom group touched the timeout group's job: %s", state(timeout.ID))
	}
}
