package drivertest

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/outcome"
)

// claimOrderJobs inserts four jobs whose claim order is b, a, c, d.
func (e *env) claimOrderJobs() (a, b, c, d *driver.Job) {
	now := time.Now()
	mk := func(prio int, ago time.Duration) *driver.InsertParams {
		p := job("a")
		p.Priority, p.RunAt = prio, now.Add(-ago)
		return p
	}
	a = e.insert(mk(5, 3*time.Second))
	b = e.insert(mk(9, time.Second))
	c = e.insert(mk(5, 2*time.Second))
	d = e.insert(mk(5, 2*time.Second))
	return a, b, c, d
}

var _ = add("ClaimOrder", func(e *env) {
	a, b, c, d := e.claimOrderJobs()
	got := e.claim(driver.ClaimParams{Max: 2})
	e.wantIDs(got, b.ID, a.ID)
	got = e.claim(driver.ClaimParams{Max: 10})
	e.wantIDs(got, c.ID, d.ID)
	j := got[0]
	if j.State != driver.StateRunning || j.Attempt != 1 || j.WorkerID != "w1" || j.StartedAt == nil ||
		j.LeaseUntil == nil || j.HeartbeatAt == nil {
		e.t.Fatalf("claimed job: state %s attempt %d worker %q started %v lease %v", j.State, j.Attempt,
			j.WorkerID, j.StartedAt, j.LeaseUntil)
	}
	if more := e.claim(driver.ClaimParams{}); len(more) != 0 {
		e.t.Fatalf("claimed %v twice", ids(more))
	}
})

var _ = add("ClaimSkipsPausedOtherQueuesAndKinds", func(e *env) {
	other := job("a")
	other.Queue = "other"
	e.insert(other)
	known := e.insert(job("known"))
	e.insert(job("unknown"))
	if err := e.admin().QueuePause(e.ctx, "default"); err != nil {
		e.t.Fatal(err)
	}
	if got := e.claim(driver.ClaimParams{}); len(got) != 0 {
		e.t.Fatalf("claimed %v from a paused queue", ids(got))
	}
	if err := e.admin().QueueResume(e.ctx, "default"); err != nil {
		e.t.Fatal(err)
	}
	got := e.claim(driver.ClaimParams{Kinds: []string{"known"}, Leases: []time.Duration{lease}})
	e.wantIDs(got, known.ID)
	if got := e.claim(driver.ClaimParams{Kinds: []string{"known"}}); len(got) != 0 {
		e.t.Fatalf("claimed %v of another kind", ids(got))
	}
	if got := e.claim(driver.ClaimParams{}); len(got) != 1 || got[0].Kind != "unknown" {
		e.t.Fatalf("claim of any kind: %v", ids(got))
	}
})

var _ = add("ClaimLeasePerKind", func(e *env) {
	short, long, other := e.insert(job("short")), e.insert(job("long")), e.insert(job("other"))
	got := e.claim(driver.ClaimParams{Kinds: []string{"short", "long", "other"},
		Leases: []time.Duration{2 * time.Second, time.Hour}, DefaultLease: time.Minute})
	want := map[int64]time.Duration{short.ID: 2 * time.Second, long.ID: time.Hour, other.ID: time.Minute}
	if len(got) != 3 {
		e.t.Fatalf("claimed %v", ids(got))
	}
	for _, j := range got {
		if l := j.LeaseUntil.Sub(*j.StartedAt); !near(*j.LeaseUntil, j.StartedAt.Add(want[j.ID]), time.Second) {
			e.t.Fatalf("job %s: lease %s, want %s", j.Kind, l, want[j.ID])
		}
	}
})

// claimedPair inserts two jobs and claims both for w1 with a 2 s lease.
func (e *env) claimedPair() (a, b *driver.Job) {
	a, b = e.insert(job("a")), e.insert(job("a"))
	if got := e.claim(driver.ClaimParams{DefaultLease: 2 * time.Second}); len(got) != 2 {
		e.t.Fatalf("claimed %v", ids(got))
	}
	return a, b
}

// Each job of a heartbeat gets its own lease; a job named twice (a stale
// attempt and the current one) is extended once, by the current one.
var _ = add("HeartbeatLeasePerJob", func(e *env) {
	a, b := e.claimedPair()
	res, err := e.d.JobHeartbeat(e.ctx, driver.HeartbeatParams{WorkerID: "w1",
		IDs: []int64{b.ID, a.ID, b.ID}, Attempts: []int{1, 1, 0},
		Leases: []time.Duration{90 * time.Minute, 1500 * time.Millisecond, time.Second}})
	if err != nil {
		e.t.Fatal(err)
	}
	slices.SortFunc(res, func(x, y driver.HeartbeatResult) int { return int(x.ID - y.ID) })
	if len(res) != 2 || res[0].ID != a.ID || res[1].ID != b.ID ||
		!near(res[0].LeaseUntil, time.Now().Add(1500*time.Millisecond), 10*time.Second) ||
		!near(res[1].LeaseUntil, time.Now().Add(90*time.Minute), 10*time.Second) {
		e.t.Fatalf("heartbeat: %+v, want job %d for 1.5 s and job %d for 90 min", res, a.ID, b.ID)
	}
	if j := e.get(b.ID); !j.LeaseUntil.Equal(res[1].LeaseUntil) {
		e.t.Fatalf("job %d lease %v, heartbeat answered %v", b.ID, j.LeaseUntil, res[1].LeaseUntil)
	}
})

var _ = add("HeartbeatExtendsOnlyHeldJobs", func(e *env) {
	a, b := e.claimedPair()
	res, err := e.d.JobHeartbeat(e.ctx, driver.HeartbeatParams{WorkerID: "w1",
		IDs: []int64{a.ID, b.ID, 1 << 40}, Attempts: []int{1, 2, 1},
		Leases: []time.Duration{time.Hour, time.Hour, time.Hour}})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(res) != 1 || res[0].ID != a.ID || !near(res[0].LeaseUntil, time.Now().Add(time.Hour), 10*time.Second) {
		e.t.Fatalf("heartbeat: %+v, want job %d extended by an hour", res, a.ID)
	}
	res, err = e.d.JobHeartbeat(e.ctx, driver.HeartbeatParams{WorkerID: "w2", IDs: []int64{b.ID},
		Attempts: []int{1}, Leases: []time.Duration{time.Hour}})
	if err != nil || len(res) != 0 {
		e.t.Fatalf("another worker's heartbeat: %+v, %v", res, err)
	}
	if j := e.get(b.ID); j.LeaseUntil.After(time.Now().Add(time.Minute)) {
		e.t.Fatalf("job %d lease extended by a worker that does not hold it", b.ID)
	}
	if _, err := e.admin().JobCancel(e.ctx, a.ID); err != nil {
		e.t.Fatal(err)
	}
	res, err = e.d.JobHeartbeat(e.ctx, driver.HeartbeatParams{WorkerID: "w1", IDs: []int64{a.ID},
		Attempts: []int{1}, Leases: []time.Duration{time.Hour}})
	if err != nil || len(res) != 1 || !res[0].CancelRequested {
		e.t.Fatalf("heartbeat after cancel: %+v, %v, want cancel_requested", res, err)
	}
})

var _ = add("TransitionsAreFenced", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", lease)
	wrongs := []driver.HeldJob{
		{ID: j.ID, Attempt: j.Attempt, WorkerID: "w2"},
		{ID: j.ID, Attempt: j.Attempt + 1, WorkerID: "w1"},
		{ID: j.ID, Attempt: j.Attempt - 1, WorkerID: "w1"},
	}
	retry := time.Now()
	p := 50
	for _, h := range wrongs {
		done, err := e.d.JobCompleteMany(e.ctx, []driver.CompleteParams{{HeldJob: h}})
		if err != nil || len(done) != 0 {
			e.t.Fatalf("complete by %+v: done %v err %v, want nothing", h, done, err)
		}
		_, err = outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: h, Error: attemptError(j, "x", true)})
		e.wantErr(err, driver.ErrLeaseLost, "fail with retry")
		_, err = outcome.FailJob(e.ctx, e.d, driver.FailParams{HeldJob: h, Error: attemptError(j, "x", false)})
		e.wantErr(err, driver.ErrLeaseLost, "fail")
		_, err = outcome.SnoozeJob(e.ctx, e.d, driver.SnoozeParams{HeldJob: h, RunAt: retry})
		e.wantErr(err, driver.ErrLeaseLost, "snooze")
		_, err = e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: h, Progress: &p, Lease: time.Hour})
		e.wantErr(err, driver.ErrLeaseLost, "progress")
	}
	got := e.wantState(j.ID, driver.StateRunning)
	if got.Attempt != j.Attempt || got.WorkerID != "w1" || len(got.Errors) != 0 || got.Progress != 0 ||
		!got.LeaseUntil.Equal(*j.LeaseUntil) {
		e.t.Fatalf("job changed by lost leases: %+v", got)
	}
})

var _ = add("ProgressAndCheckpoint", func(e *env) {
	j := e.claimID(e.insert(job("a")), "w1", 2*time.Second)
	p, msg := 40, "page 4"
	h, err := e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: held(j), Progress: &p, ProgressMessage: &msg,
		Checkpoint: json.RawMessage(`{"page": 4}`), Lease: time.Hour})
	if err != nil || h.ID != j.ID || !near(h.LeaseUntil, time.Now().Add(time.Hour), 10*time.Second) || h.CancelRequested {
		e.t.Fatalf("progress: %+v, %v", h, err)
	}
	got := e.get(j.ID)
	if got.Progress != 40 || got.ProgressMessage != "page 4" || !jsonEqual(got.Checkpoint, []byte(`{"page":4}`)) {
		e.t.Fatalf("progress %d %q checkpoint %s", got.Progress, got.ProgressMessage, got.Checkpoint)
	}
	if _, err := e.d.JobProgress(e.ctx, driver.ProgressParams{HeldJob: held(j)}); err != nil {
		e.t.Fatal(err)
	}
	if again := e.get(j.ID); again.Progress != 40 || again.ProgressMessage != "page 4" || again.Checkpoint == nil {
		e.t.Fatalf("empty progress report changed fields: %+v", again)
	}
	e.complete(j, `{"ok": true}`)
	done := e.wantState(j.ID, driver.StateCompleted)
	if done.Progress != 100 || !jsonEqual(done.Result, []byte(`{"ok":true}`)) || done.FinishedAt == nil ||
		done.LeaseUntil != nil || !jsonEqual(done.Checkpoint, []byte(`{"page":4}`)) {
		e.t.Fatalf("completed job: progress %d result %s finished %v lease %v", done.Progress, done.Result,
			done.FinishedAt, done.LeaseUntil)
	}
})

var _ = add("CompleteManyAnswersHeldOnly", func(e *env) {
	for range 3 {
		e.insert(job("a"))
	}
	got := e.claim(driver.ClaimParams{})
	batch := []driver.CompleteParams{{HeldJob: held(got[0])}, {HeldJob: held(got[1]), Result: json.RawMessage(`[1]`)},
		{HeldJob: driver.HeldJob{ID: got[2].ID, Attempt: 9, WorkerID: "w1"}}}
	done, err := e.d.JobCompleteMany(e.ctx, batch)
	if err != nil || !slices.Equal(driver.CompletedIDs(done), []int64{got[0].ID, got[1].ID}) {
		e.t.Fatalf("complete: %v, %v", done, err)
	}
	e.wantState(got[2].ID, driver.StateRunning)
	if j := e.wantState(got[1].ID, driver.StateCompleted); !jsonEqual(j.Result, []byte(`[1]`)) {
		e.t.Fatalf("result %s", j.Result)
	}
	if j := e.get(got[0].ID); j.Result != nil {
		e.t.Fatalf("result without one: %s", j.Result)
	}
})

// A batch completion answers each job it finished with what the history
// counts it by: its end state (cancelled when it was asked to cancel while
// it ran), queue, kind, run_at and the start of the attempt it finished.
var _ = add("CompleteManyAnswersFinishedJobs", func(e *env) {
	a, b, c := job("a"), job("b"), job("c")
	a.Queue, b.Queue, c.Queue = "q1", "q1", "q1" // one queue: one shard on Citus
	a.RunAt = time.Now().Add(-time.Hour).Truncate(time.Microsecond)
	ja := e.claimID(e.insert(a), "w1", lease)
	jb := e.claimID(e.insert(b), "w1", lease)
	jc := e.claimID(e.insert(c), "w1", lease)
	if _, err := e.admin().JobCancel(e.ctx, jb.ID); err != nil {
		e.t.Fatalf("ask the running job to cancel: %v", err)
	}
	done, err := e.d.JobCompleteMany(e.ctx, []driver.CompleteParams{{HeldJob: held(ja)}, {HeldJob: held(jb)},
		{HeldJob: driver.HeldJob{ID: jc.ID, Attempt: jc.Attempt + 1, WorkerID: "w1"}}})
	if err != nil || len(done) != 2 {
		e.t.Fatalf("complete: %+v, %v; want two jobs", done, err)
	}
	slices.SortFunc(done, func(x, y driver.CompletedJob) int { return cmp.Compare(x.ID, y.ID) })
	for i, want := range []struct {
		j     *driver.Job
		state driver.JobState
	}{{ja, driver.StateCompleted}, {jb, driver.StateCancelled}} {
		got := done[i]
		if got.ID != want.j.ID || got.State != want.state || got.Queue != want.j.Queue || got.Kind != want.j.Kind {
			e.t.Fatalf("finished %+v, want job %d %s in %s of kind %s", got, want.j.ID, want.state, want.j.Queue, want.j.Kind)
		}
		if want.j.StartedAt == nil || !got.RunAt.Equal(want.j.RunAt) || !got.StartedAt.Equal(*want.j.StartedAt) {
			e.t.Fatalf("job %d finished with run_at %v, started %v; claimed with %v, %v", got.ID, got.RunAt,
				got.StartedAt, want.j.RunAt, want.j.StartedAt)
		}
		e.wantState(got.ID, want.state)
	}
	e.wantState(jc.ID, driver.StateRunning)
	if !done[0].RunAt.Equal(a.RunAt) {
		e.t.Fatalf("run_at %v, inserted as %v", done[0].RunAt, a.RunAt)
	}
})

// A batch may name a job twice (a stale attempt and the current one): the
// current one completes it, once. Results of every JSON shape are kept.
var _ = add("CompleteManyRepeatsAndResults", func(e *env) {
	for range 3 {
		e.insert(job("a"))
	}
	got := e.claim(driver.ClaimParams{})
	stale := held(got[1])
	stale.Attempt--
	batch := []driver.CompleteParams{
		{HeldJob: held(got[1]), Result: json.RawMessage(`[2]`)},
		{HeldJob: held(got[0]), Result: json.RawMessage(`{"s": "a\"b", "u": "é", "n": [1, {"k": null}]}`)},
		{HeldJob: stale, Result: json.RawMessage(`"stale"`)},
		{HeldJob: held(got[2]), Result: json.RawMessage(`null`)},
	}
	done, err := e.d.JobCompleteMany(e.ctx, batch)
	if err != nil || !slices.Equal(driver.CompletedIDs(done), []int64{got[0].ID, got[1].ID, got[2].ID}) {
		e.t.Fatalf("complete: %v, %v; want each job once", done, err)
	}
	want := map[int64]string{got[0].ID: `{"s":"a\"b","u":"é","n":[1,{"k":null}]}`, got[1].ID: `[2]`, got[2].ID: `null`}
	for id, result := range want {
		if j := e.wantState(id, driver.StateCompleted); !jsonEqual(j.Result, []byte(result)) {
			e.t.Fatalf("job %d result %s, want %s", id, j.Result, result)
		}
	}
})

var _ = add("ClaimByTenant", func(e *env) {
	a, b := job("k"), job("k")
	a.Tenant, b.Tenant = "a", "b"
	ja, jb := e.insert(a), e.insert(b)
	tenant := "b"
	e.wantIDs(e.claim(driver.ClaimParams{Tenant: &tenant}), jb.ID)
	e.wantIDs(e.claim(driver.ClaimParams{}), ja.ID)
})

var _ = add("ClaimAfterAPlace", func(e *env) {
	a, b, c, d := e.claimOrderJobs()
	last := job("a")
	last.Priority, last.RunAt = 1, time.Now().Add(-5*time.Second)
	f := e.insert(last)
	// Claim order: b, a, c, d, f. After c: d and f only.
	k := c.Key()
	e.wantIDs(e.claim(driver.ClaimParams{After: &k}), d.ID, f.ID)
	if !b.Key().Before(k) || !k.Before(d.Key()) || k.Before(k) {
		e.t.Fatalf("ClaimKey.Before disagrees with claim order")
	}
	// What lies before the place is left for a claim from the head.
	e.wantIDs(e.claim(driver.ClaimParams{}), b.ID, a.ID, c.ID)
})

var _ = add("InsertStart", func(e *env) {
	start := driver.StartParams{WorkerID: "w1", Lease: time.Hour}
	insertStart := func(p *driver.InsertParams) *driver.Job {
		e.t.Helper()
		j, err := e.d.JobInsertStart(e.ctx, p, start)
		if err != nil {
			e.t.Fatalf("JobInsertStart: %v", err)
		}
		return j
	}
	p := job("a")
	p.Payload = json.RawMessage(`{"n":1}`)
	j := insertStart(p)
	if j.State != driver.StateRunning || j.Attempt != 1 || j.WorkerID != "w1" || j.StartedAt == nil ||
		j.HeartbeatAt == nil || j.LeaseUntil == nil || !near(*j.LeaseUntil, time.Now().Add(time.Hour), 10*time.Second) ||
		string(j.Payload) != `{"n": 1}` && string(j.Payload) != `{"n":1}` {
		e.t.Fatalf("started job: state %s attempt %d worker %q started %v lease %v payload %s", j.State, j.Attempt,
			j.WorkerID, j.StartedAt, j.LeaseUntil, j.Payload)
	}
	if got := e.claim(driver.ClaimParams{}); len(got) != 0 {
		e.t.Fatalf("claimed %v, a job that started at its insert", ids(got))
	}
	// The job is held like a claimed one: its holder completes it.
	done, err := e.d.JobCompleteMany(e.ctx, []driver.CompleteParams{{HeldJob: held(j)}})
	if err != nil || len(done) != 1 {
		e.t.Fatalf("complete a started job: %v, %v", done, err)
	}

	later := job("a")
	later.RunAt = time.Now().Add(time.Hour)
	if j := insertStart(later); j.State != driver.StateScheduled || j.WorkerID != "" || j.Attempt != 0 {
		e.t.Fatalf("due later: state %s worker %q attempt %d, want scheduled", j.State, j.WorkerID, j.Attempt)
	}
	paused := job("a")
	paused.Paused = true
	if j := insertStart(paused); j.State != driver.StatePaused || j.WorkerID != "" {
		e.t.Fatalf("inserted paused: state %s worker %q", j.State, j.WorkerID)
	}
	if err := e.admin().QueuePause(e.ctx, "default"); err != nil {
		e.t.Fatal(err)
	}
	pending := insertStart(job("a"))
	if pending.State != driver.StatePending || pending.WorkerID != "" || pending.LeaseUntil != nil || pending.Attempt != 0 {
		e.t.Fatalf("queue paused: state %s worker %q lease %v", pending.State, pending.WorkerID, pending.LeaseUntil)
	}
	if err := e.admin().QueueResume(e.ctx, "default"); err != nil {
		e.t.Fatal(err)
	}
	e.wantIDs(e.claim(driver.ClaimParams{}), pending.ID)

	keyed := job("a")
	keyed.IdempotencyKey = "k"
	if _, err := e.d.JobInsertStart(e.ctx, keyed, start); err == nil {
		e.t.Fatal("JobInsertStart took a job with an idempotency key")
	}
	if got := e.claim(driver.ClaimParams{}); len(got) != 0 {
		e.t.Fatalf("a refused insert left jobs %v", ids(got))
	}
})

// A worker's report and its next claim in one call: the held job finishes,
// the refused one stays as it was, and the claim takes neither.
var _ = add("CompleteClaimReportsThenClaims", func(e *env) {
	cc := need[driver.CompleteClaimStore](e, e.d)
	for range 4 {
		e.insert(job("a"))
	}
	got := e.claim(driver.ClaimParams{Max: 2})
	stale := held(got[1])
	stale.Attempt++
	claim := driver.ClaimParams{Queue: "default", WorkerID: "w1", Max: 10, DefaultLease: lease}
	done, next, err := cc.JobCompleteClaim(e.ctx, []driver.CompleteParams{
		{HeldJob: held(got[0]), Result: json.RawMessage(`[1]`)}, {HeldJob: stale}}, claim)
	if err != nil || !slices.Equal(driver.CompletedIDs(done), []int64{got[0].ID}) {
		e.t.Fatalf("complete and claim: finished %v, %v; want [%d]", done, err, got[0].ID)
	}
	if len(next) != 2 || slices.ContainsFunc(next, func(j *driver.Job) bool { return j.ID == got[0].ID || j.ID == got[1].ID }) {
		e.t.Fatalf("claimed %v after reporting %d and %d, want the other two", ids(next), got[0].ID, got[1].ID)
	}
	for _, j := range next {
		if j.State != driver.StateRunning || j.WorkerID != "w1" || j.Attempt != 1 {
			e.t.Fatalf("claimed job %d is %s, attempt %d, for %q", j.ID, j.State, j.Attempt, j.WorkerID)
		}
	}
	if j := e.wantState(got[0].ID, driver.StateCompleted); !jsonEqual(j.Result, []byte(`[1]`)) {
		e.t.Fatalf("result %s", j.Result)
	}
	e.wantState(got[1].ID, driver.StateRunning)

	// Nothing to report: a claim alone.
	done, none, err := cc.JobCompleteClaim(e.ctx, nil, claim)
	if err != nil || len(done) != 0 || len(none) != 0 {
		e.t.Fatalf("claim alone on an empty queue: %v, %v, %v", done, ids(none), err)
	}
	// The last reports, with nothing left to claim.
	batch := []driver.CompleteParams{{HeldJob: held(got[1])}}
	for _, j := range next {
		batch = append(batch, driver.CompleteParams{HeldJob: held(j)})
	}
	done, next, err = cc.JobCompleteClaim(e.ctx, batch, claim)
	want := []int64{got[1].ID, batch[1].ID, batch[2].ID}
	slices.Sort(want)
	if err != nil || !slices.Equal(driver.CompletedIDs(done), want) || len(next) != 0 {
		e.t.Fatalf("the last reports: finished %v (want %v), claimed %v, %v", done, want, ids(next), err)
	}
})
