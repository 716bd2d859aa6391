package dashboard_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// TestDashboardInBrowser drives headless Chromium against a real `skiplock
// serve` on each database: log in, see a job appear live, open it (its
// payload shown, never run), follow a running job's progress, retry a
// failed job, cancel a running one, apply a bulk retry, pause and resume,
// search by idempotency key and by id, pause a queue, see the processes
// and open an HTTP worker's job; typing in the search box survives a live
// refresh; every page's status dot turns green; a
// viewer cannot act and a tenant token cannot see another tenant, by list
// or by search; on a phone's screen no page is wider than the screen nor
// has text below 9 px, and it turns dark with the system.
func TestDashboardInBrowser(t *testing.T) {
	chrome := startChromium(t)
	dbs := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "dash.db") },
		"postgres": func(t *testing.T) string {
			_, url := pgtest.Schema(t)
			return url
		},
	}
	for name, db := range dbs {
		t.Run(name, func(t *testing.T) {
			s := serve(t, db(t))
			admin := s.token("--role", "admin")
			viewer := s.token("--role", "viewer")
			acme := s.token("--role", "admin", "--tenant", "acme")
			dashboardAsAdmin(t, newBrowser(t, chrome, s.base, shotDir(t, name)), s, admin)
			dashboardHistory(t, newBrowser(t, chrome, s.base, shotDir(t, name)), s, admin)
			dashboardSelection(t, newBrowser(t, chrome, s.base, shotDir(t, name)), s, admin)
			dashboardAsViewer(t, newBrowser(t, chrome, s.base, ""), s, admin, viewer)
			dashboardAsTenant(t, newBrowser(t, chrome, s.base, ""), s, admin, acme)
			dashboardOnPhone(t, newBrowser(t, chrome, s.base, shotDir(t, name)), admin)
		})
	}
}

func dashboardAsAdmin(t *testing.T, b *browser, s *served, admin string) {
	b.login(admin)

	// A job enqueued while the list is open appears without a reload; the
	// filters someone is typing in stay as they are, focus and text.
	b.do("open jobs", b.open("/jobs"), chromedp.WaitVisible(chromedp.ID("jobs")), chromedp.SendKeys(chromedp.ID("f-kind"), "emai"))
	eval[bool](b, `new Promise(r => { const t = setInterval(() => { if (document.body.classList.contains("connected")) { clearInterval(t); r(true) } }, 20) })`)
	eval[bool](b, `(window.typing = document.getElementById("f-kind"), true)`)
	j := s.enqueue(admin, map[string]any{"kind": "email", "queue": "mail", "workflow_id": "wf-1",
		"payload": map[string]any{"to": "ann@example.com", "html": "<script>window.pwned=1</script>"}})
	for _, kind := range []string{"thumbnail", "publish"} {
		s.enqueue(admin, map[string]any{"kind": kind, "workflow_id": "wf-1", "depends_on": []int64{j.ID}})
	}
	b.do("see the job appear live", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-id="%d"]`, j.ID))))
	if !eval[bool](b, `document.getElementById("f-kind") === window.typing && document.activeElement === window.typing && window.typing.value === "emai"`) {
		t.Fatal("a live reload replaced the filter being typed in")
	}
	dashboardSearchWhileRefreshing(t, b, s, admin, j.ID)

	// Its page shows the payload as text; the script in it never runs.
	b.do("open the job", b.open(fmt.Sprintf("/jobs/%d", j.ID)), chromedp.WaitVisible(chromedp.ID("payload")))
	b.waitText("#payload", "<script>window.pwned=1</script>")
	if eval[bool](b, `window.pwned === 1`) {
		t.Fatal("a payload's script ran")
	}

	// A running job's progress and checkpoint follow its heartbeats live.
	run := s.enqueue(admin, map[string]any{"kind": "transcode", "queue": "video", "workflow_id": "wf-1"})
	s.claim(admin, "video", "w-1")
	b.do("open the running job", b.open(fmt.Sprintf("/jobs/%d", run.ID)), chromedp.WaitVisible(chromedp.ID("progress")))
	eval[bool](b, `new Promise(r => { const t = setInterval(() => { if (document.body.classList.contains("connected")) { clearInterval(t); r(true) } }, 20) })`)
	s.api(admin, "POST", fmt.Sprintf("/v1/jobs/%d/heartbeat", run.ID), map[string]any{"worker_id": "w-1",
		"progress": 40, "progress_message": "pass 1 of 2", "checkpoint": map[string]any{"frame": 1200}}, &struct{}{})
	b.waitText("#progress-text", "40%")
	b.waitText("#checkpoint", "1200")
	b.waitText("#worker", "w-1")
	b.screenshot("job")

	// Cancel the running job: it ends cancelled once its worker stops.
	b.click(`button[value="Cancel"]`)
	b.waitText(".facts", "requested")
	var hb struct {
		CancelRequested bool `json:"cancel_requested"`
	}
	s.api(admin, "POST", fmt.Sprintf("/v1/jobs/%d/heartbeat", run.ID), map[string]any{"worker_id": "w-1"}, &hb)
	if !hb.CancelRequested {
		t.Fatal("the worker was not told of the cancel")
	}
	s.api(admin, "POST", fmt.Sprintf("/v1/jobs/%d/complete", run.ID), map[string]any{"worker_id": "w-1"}, &struct{}{})
	b.waitText("#state", "cancelled")

	// Retry a failed job from its page. It failed its only attempt: its
	// retries are exhausted, it was attempt 1 of 1. Retried, it waits for
	// attempt 2 of 2 and shows no start or heartbeat of the attempt before.
	f := s.failed(admin, "flaky")
	b.do("open the failed job", b.open(fmt.Sprintf("/jobs/%d", f.ID)), chromedp.WaitVisible(chromedp.ID("state")))
	b.waitText(".attempt", "it broke")
	b.waitText(".attempt .end", "retries exhausted")
	b.waitText("#attempt-of", "attempt 1 of 1")
	b.waitText("#max-retries", "runs allowed in all: 1")
	b.waitText("#heartbeat", "ago")
	b.click(`button[value="Retry"]`)
	b.waitText("#state", "pending")
	if got := s.job(admin, f.ID); got.State != "pending" {
		t.Fatalf("retried job is %s", got.State)
	}
	b.waitText("#attempt-of", "next attempt 2 of 2")
	b.waitText("#started", "—")
	if eval[bool](b, `document.getElementById("heartbeat") !== null || document.getElementById("lease") !== null`) {
		t.Fatal("a retried job's page shows the heartbeat or lease of the attempt before")
	}
	// An error that refuses a retry with retries left is "not retryable".
	perm := s.enqueue(admin, map[string]any{"kind": "strict", "queue": "q-strict", "max_retries": 2})
	s.claim(admin, "q-strict", "w-p")
	s.api(admin, "POST", fmt.Sprintf("/v1/jobs/%d/fail", perm.ID), map[string]any{"worker_id": "w-p",
		"retryable": false, "error": map[string]any{"type": "bad_input", "message": "no such file"}}, &struct{}{})
	b.do("open the permanently failed job", b.open(fmt.Sprintf("/jobs/%d", perm.ID)), chromedp.WaitVisible(chromedp.ID("state")))
	b.waitText(".attempt .end", "not retryable")
	b.waitText("#attempt-of", "attempt 1 of 3")
	b.do("open the jobs list", b.open("/jobs?kind=strict"), chromedp.WaitVisible(chromedp.ID("jobs")))
	b.waitText(fmt.Sprintf(`tr[data-id="%d"] td.num`, perm.ID), "1/3")

	// Bulk retry: the confirmation counts the jobs, then all are retried.
	var failed []apiJob
	for range 3 {
		failed = append(failed, s.failed(admin, "bulky"))
	}
	b.do("filter failed bulky jobs", b.open("/jobs?state=failed&kind=bulky"), chromedp.WaitVisible(chromedp.ID("bulk-retry")))
	b.screenshot("jobs")
	b.click("#bulk-retry")
	b.waitText("#matched", "3")
	b.screenshot("bulk")
	b.click("#confirm")
	b.waitText("#flash", "3 of 3")
	for _, j := range failed {
		if got := s.job(admin, j.ID); got.State != "pending" {
			t.Fatalf("job %d after bulk retry: %s", j.ID, got.State)
		}
	}

	// Bulk pause and resume: each counts first, then acts on every job.
	var nightly []apiJob
	for range 3 {
		nightly = append(nightly, s.enqueue(admin, map[string]any{"kind": "nightly", "queue": "batch"}))
	}
	bulkAct := func(button, want string) {
		t.Helper()
		b.do("filter nightly jobs", b.open("/jobs?kind=nightly&queue=batch"), chromedp.WaitVisible(chromedp.ID(button)))
		b.click("#" + button)
		b.waitText("#matched", "3")
		if button == "bulk-pause" {
			b.screenshot("bulk-pause")
		}
		b.click("#confirm")
		b.waitText("#flash", "3 of 3")
		for _, j := range nightly {
			if got := s.job(admin, j.ID); got.State != want {
				t.Fatalf("job %d after %s: %s, want %s", j.ID, button, got.State, want)
			}
		}
	}
	bulkAct("bulk-pause", "paused")
	bulkAct("bulk-resume", "pending")

	// Search: a number opens that job; other text lists the jobs of that
	// idempotency key, and the page says it searched by key.
	keyed := s.enqueue(admin, map[string]any{"kind": "invoice", "idempotency_key": "invoice-2026-11"})
	other := s.enqueue(admin, map[string]any{"kind": "invoice", "idempotency_key": "invoice-2026-12"})
	b.do("search by key", b.open("/jobs"), chromedp.WaitVisible(chromedp.ID("search")),
		chromedp.SendKeys(chromedp.ID("search"), "invoice-2026-11\n"), chromedp.WaitVisible(chromedp.ID("search-mode")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-id="%d"]`, keyed.ID))))
	b.waitText("#search-mode", "Searched by idempotency key")
	if b.has(fmt.Sprintf(`tr[data-id="%d"]`, other.ID)) {
		t.Fatal("a search by key lists a job of another key")
	}
	b.screenshot("search")
	b.do("search by id", b.open("/jobs"), chromedp.WaitVisible(chromedp.ID("search")),
		chromedp.SendKeys(chromedp.ID("search"), fmt.Sprintf("%d\n", other.ID)), chromedp.WaitVisible(chromedp.ID("state")))
	b.waitText("h1", fmt.Sprint(other.ID))

	// Pause a queue.
	b.do("open queues", b.open("/queues"), chromedp.WaitVisible(chromedp.CSS(`tr[data-queue="mail"]`)))
	b.click(`tr[data-queue="mail"] button[value="Pause"]`)
	b.waitText(`tr[data-queue="mail"] .qstate`, "paused")
	var qs struct {
		Queues []struct {
			Name   string
			Paused bool
		}
	}
	s.api(admin, "GET", "/v1/queues", nil, &qs)
	for _, q := range qs.Queues {
		if q.Name == "mail" && !q.Paused {
			t.Fatal("queue mail is not paused")
		}
	}
	b.screenshot("queues")

	// Every page connects to the live updates: its status dot turns green.
	running := s.enqueue(admin, map[string]any{"kind": "transcode", "queue": "video"})
	s.claim(admin, "video", "w-2")
	// The processes page lists the server's client and the HTTP worker
	// with the job it holds, linked to the job's page.
	b.do("open processes", b.open("/processes"), chromedp.WaitVisible(chromedp.CSS(`tr[data-process="w-2"]`)))
	b.click(fmt.Sprintf(`tr[data-process="w-2"] a[href="/jobs/%d"]`, running.ID))
	b.waitText("h1", fmt.Sprint(running.ID))
	b.do("open processes", b.open("/processes"), chromedp.WaitVisible(chromedp.CSS(`[data-table="clients"] tr[data-process]`)))
	b.waitText(`[data-table="clients"] tr[data-process]`, "none (a server)")
	b.screenshot("processes")
	for page, sel := range map[string]string{"/": ".chart", "/jobs": "#jobs", "/queues": "table", "/processes": "table", "/workflows": "#main",
		"/workflows/wf-1": ".dag", "/dead": "table", "/schedules": "table", fmt.Sprintf("/jobs/%d", running.ID): "#state",
		fmt.Sprintf("/jobs/%d", run.ID): "#state"} {
		b.do("open "+page, b.open(page), chromedp.WaitVisible(chromedp.CSS(sel)))
		waitConnected(t, b, page)
	}
	b.do("overview", b.open("/"), chromedp.WaitVisible(chromedp.CSS(".chart")))
	b.waitText(".tiles", "running on 1 worker")
	if eval[bool](b, `document.querySelector(".tiles").textContent.includes("1 workers")`) {
		t.Fatal(`the overview says "1 workers"`)
	}
	b.do("overview", b.open("/"), chromedp.WaitVisible(chromedp.CSS(".chart")))
	b.screenshot("overview")
	b.do("workflow", b.open("/workflows/wf-1"), chromedp.WaitVisible(chromedp.CSS(".dag")))
	b.screenshot("workflow")
	b.do("dead letters", b.open("/dead"), chromedp.WaitVisible(chromedp.CSS("table")))
	b.screenshot("dead")
}

// dashboardSearchWhileRefreshing types in the search box while the list
// reloads: the box keeps its element, text, focus and caret, and a row that
// did not change stays the same element (only what changed is replaced).
func dashboardSearchWhileRefreshing(t *testing.T, b *browser, s *served, admin string, shown int64) {
	t.Helper()
	row := fmt.Sprintf(`tr[data-id="%d"]`, shown)
	b.do("type in the search box", b.open("/jobs"), chromedp.WaitVisible(chromedp.CSS(row)),
		chromedp.Click(chromedp.ID("search")), chromedp.SendKeys(chromedp.ID("search"), "invoice-20"))
	waitConnected(t, b, "/jobs")
	eval[bool](b, fmt.Sprintf(`(window.search = document.getElementById("search"), window.search.setSelectionRange(3, 3),
		window.row = document.querySelector(%q), true)`, row))
	fresh := s.enqueue(admin, map[string]any{"kind": "email", "queue": "mail"})
	b.do("see the list refresh", chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-id="%d"]`, fresh.ID))))
	if !eval[bool](b, `document.getElementById("search") === window.search && document.activeElement === window.search &&
		window.search.value === "invoice-20" && window.search.selectionStart === 3`) {
		t.Fatal("a live reload replaced the search box being typed in, its text, focus or caret")
	}
	if !eval[bool](b, `window.row.isConnected && document.querySelector("tbody").firstElementChild !== window.row`) {
		t.Fatal("a live reload replaced a row that did not change")
	}
	b.do("type on", chromedp.SendKeys(chromedp.ID("search"), "X"))
	if got := eval[string](b, `document.getElementById("search").value`); got != "invXoice-20" {
		t.Fatalf("the search box reads %q after typing on", got)
	}
}

// waitConnected waits until the page's status dot says it is connected to
// the server's live updates.
func waitConnected(t *testing.T, b *browser, page string) {
	t.Helper()
	if !eval[bool](b, `new Promise(r => { const end = Date.now() + 20000; const t = setInterval(() => {
		const ok = document.body.classList.contains("connected");
		if (ok || Date.now() > end) { clearInterval(t); r(ok) } }, 20) })`) {
		t.Fatalf("%s: the status dot never turned connected", page)
	}
	color := eval[string](b, `getComputedStyle(document.querySelector(".brand"), "::before").color`)
	if color != "rgb(47, 158, 68)" {
		t.Fatalf("%s: the status dot is %s, not green", page, color)
	}
}

// A viewer sees the pages but no action, and a forged action is refused.
func dashboardAsViewer(t *testing.T, b *browser, s *served, admin, viewer string) {
	f := s.failed(admin, "viewed")
	b.login(viewer)
	b.do("open the failed job", b.open(fmt.Sprintf("/jobs/%d", f.ID)), chromedp.WaitVisible(chromedp.ID("state")))
	if b.has(`button[value="Retry"]`) {
		t.Fatal("a viewer is offered Retry")
	}
	if st := b.post(fmt.Sprintf("/jobs/%d/retry", f.ID)); st != http.StatusForbidden {
		t.Fatalf("a viewer's retry answered %d", st)
	}
	if st := b.post("/queues/default/pause"); st != http.StatusForbidden {
		t.Fatalf("a viewer's queue pause answered %d", st)
	}
	if st := b.post("/bulk"); st != http.StatusForbidden {
		t.Fatalf("a viewer's bulk action answered %d", st)
	}
	if got := s.job(admin, f.ID); got.State != "failed" {
		t.Fatalf("a viewer changed job %d to %s", f.ID, got.State)
	}
	b.do("open failed jobs", b.open("/jobs?state=failed"), chromedp.WaitVisible(chromedp.ID("jobs")))
	for _, sel := range []string{"#bulk-retry", "#bulk-cancel", "#bulk-pause", "#bulk-resume"} {
		if b.has(sel) {
			t.Fatalf("a viewer is offered %s", sel)
		}
	}
}

// A tenant's token lists only its tenant's jobs; another's is not found.
func dashboardAsTenant(t *testing.T, b *browser, s *served, admin, acme string) {
	mine := s.enqueue(admin, map[string]any{"kind": "report", "tenant": "acme", "idempotency_key": "report-q4"})
	theirs := s.enqueue(admin, map[string]any{"kind": "report", "tenant": "globex", "idempotency_key": "report-q4"})
	b.login(acme)
	b.do("search a key both tenants use", b.open("/jobs"), chromedp.WaitVisible(chromedp.ID("search")),
		chromedp.SendKeys(chromedp.ID("search"), "report-q4\n"), chromedp.WaitVisible(chromedp.ID("search-mode")),
		chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-id="%d"]`, mine.ID))))
	if b.has(fmt.Sprintf(`tr[data-id="%d"]`, theirs.ID)) {
		t.Fatal("a tenant's search by key lists another tenant's job")
	}
	b.do("search another tenant's job by id", b.open("/jobs"), chromedp.WaitVisible(chromedp.ID("search")),
		chromedp.SendKeys(chromedp.ID("search"), fmt.Sprintf("%d\n", theirs.ID)), chromedp.WaitVisible(chromedp.ID("search-mode")))
	if b.has(fmt.Sprintf(`tr[data-id="%d"]`, theirs.ID)) {
		t.Fatal("a tenant's search by id finds another tenant's job")
	}
	b.do("list jobs", b.open("/jobs?kind=report"), chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`tr[data-id="%d"]`, mine.ID))))
	if b.has(fmt.Sprintf(`tr[data-id="%d"]`, theirs.ID)) {
		t.Fatal("a tenant token lists another tenant's job")
	}
	b.do("open another tenant's job", b.open(fmt.Sprintf("/jobs/%d", theirs.ID)), chromedp.WaitVisible(chromedp.ID("error")))
	b.waitText("#error", "not found")
	if st := b.post(fmt.Sprintf("/jobs/%d/cancel", theirs.ID)); st != http.StatusNotFound {
		t.Fatalf("a tenant's cancel of another tenant's job answered %d", st)
	}
	if got := s.job(admin, theirs.ID); got.State != "pending" {
		t.Fatalf("job %d of another tenant is %s", theirs.ID, got.State)
	}
}

// On a phone's screen every page fits its width (wide tables scroll in
// their box), and the pages follow the system's dark or light scheme.
func dashboardOnPhone(t *testing.T, b *browser, admin string) {
	b.login(admin)
	if _, err := chromedp.Call(b.ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: 390, Height: 844, DeviceScaleFactor: 2, Mobile: true}); err != nil {
		t.Fatalf("emulate a phone: %v", err)
	}
	for page, sel := range map[string]string{"/": ".chart", "/jobs": "#jobs", "/queues": "table", "/dead": "table",
		"/workflows/wf-1": ".dag", "/schedules": "table", "/processes": "table"} {
		b.do("open "+page+" on a phone", b.open(page), chromedp.WaitVisible(chromedp.CSS(sel)))
		if w := eval[[]int](b, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
			t.Fatalf("%s on a phone is %dpx wide on a %dpx screen", page, w[0], w[1])
		}
		if small := eval[string](b, smallestText); small != "" {
			t.Fatalf("%s on a phone has text below 9px: %s", page, small)
		}
	}
	b.do("overview on a phone", b.open("/"), chromedp.WaitVisible(chromedp.CSS(".chart")))
	b.screenshot("overview-phone")
	background := func(scheme string) int {
		t.Helper()
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
			t.Fatalf("emulate the %s scheme: %v", scheme, err)
		}
		// The sum of the body's red, green and blue.
		return eval[int](b, `getComputedStyle(document.body).backgroundColor.match(/\d+/g).slice(0, 3).reduce((a, c) => a + +c, 0)`)
	}
	if dark, light := background("dark"), background("light"); dark > 3*64 || light < 3*192 {
		t.Fatalf("the background's red+green+blue is %d dark and %d light", dark, light)
	}
	background("dark")
	b.screenshot("overview-dark")
}

// smallestText answers the first text of the page drawn below 9 CSS pixels,
// with its size, or "": text in an SVG is drawn at its font size times the
// SVG's scale (its width on screen over its viewBox's).
const smallestText = `(() => {
	const walk = document.createTreeWalker(document.getElementById("main"), NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const el = n.parentElement;
		if (!n.textContent.trim() || !el || el.closest("title, script, style") || !el.getClientRects().length) continue;
		let size = parseFloat(getComputedStyle(el).fontSize);
		const svg = el.closest("svg");
		if (svg && svg.viewBox.baseVal && svg.viewBox.baseVal.width) {
			size *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
		}
		if (size < 9) return JSON.stringify(n.textContent.trim().slice(0, 40)) + " at " + size.toFixed(1) + "px";
	}
	return "";
})()`
