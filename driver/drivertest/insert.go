package drivertest

import (
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/skiplock/skiplock/driver"
)

var _ = add("InsertStates", func(e *env) {
	now := time.Now()
	pending := e.insert(job("a"))
	if pending.State != driver.StatePending || !near(pending.RunAt, now, 5*time.Second) {
		e.t.Fatalf("no run_at: state %s run_at %s, want pending now", pending.State, pending.RunAt)
	}
	past := job("a")
	past.RunAt = now.Add(-time.Hour)
	if j := e.insert(past); j.State != driver.StatePending || !j.RunAt.Equal(past.RunAt.UTC().Truncate(time.Microsecond)) {
		e.t.Fatalf("past run_at: state %s run_at %s", j.State, j.RunAt)
	}
	later := job("a")
	later.RunAt = now.Add(time.Hour)
	if j := e.insert(later); j.State != driver.StateScheduled {
		e.t.Fatalf("future run_at: state %s, want scheduled", j.State)
	}
	paused := job("a")
	paused.Paused = true
	if j := e.insert(paused); j.State != driver.StatePaused {
		e.t.Fatalf("paused: state %s", j.State)
	}
	child := job("a")
	child.DependsOn = []int64{pending.ID}
	if j := e.insert(child); j.State != driver.StateWaiting || !slices.Equal(j.DependsOn, []int64{pending.ID}) {
		e.t.Fatalf("dependent: state %s depends_on %v, want waiting on %d", j.State, j.DependsOn, pending.ID)
	}
})

var _ = add("InsertDefaultsAndFields", func(e *env) {
	j := e.insert(job("plain"))
	switch {
	case !jsonEqual(j.Payload, []byte(`{}`)) || !jsonEqual(j.Metadata, []byte(`{}`)):
		e.t.Fatalf("payload %s metadata %s, want {}", j.Payload, j.Metadata)
	case len(j.Tags) != 0 || j.Tags == nil || len(j.Errors) != 0 || j.Errors == nil || len(j.DependsOn) != 0:
		e.t.Fatalf("tags %v errors %v depends_on %v, want empty", j.Tags, j.Errors, j.DependsOn)
	case j.Attempt != 0 || j.Progress != 0 || j.WorkerID != "" || j.LeaseUntil != nil || j.StartedAt != nil:
		e.t.Fatalf("fresh job has attempt %d progress %d worker %q", j.Attempt, j.Progress, j.WorkerID)
	case j.Checkpoint != nil || j.Result != nil || j.FinishedAt != nil || j.CancelRequested:
		e.t.Fatalf("fresh job has checkpoint/result/finished_at")
	case j.ID <= 0 || j.CreatedAt.IsZero() || j.UpdatedAt.IsZero():
		e.t.Fatalf("id %d created_at %s", j.ID, j.CreatedAt)
	}
	p := job("full")
	p.Op, p.Queue, p.Tenant, p.Priority, p.MaxRetries = "ingest", "media", "acme", 9, 7
	p.Payload, p.Metadata = json.RawMessage(`{"n": 1, "s": "x"}`), json.RawMessage(`{"source": "test"}`)
	p.Tags, p.WorkflowID, p.Stage = []string{"red", "blue"}, "wf-1", "transcode"
	j = e.get(e.insert(p).ID)
	switch {
	case j.Kind != "full" || j.Op != "ingest" || j.Queue != "media" || j.Tenant != "acme":
		e.t.Fatalf("kind/op/queue/tenant: %q %q %q %q", j.Kind, j.Op, j.Queue, j.Tenant)
	case j.Priority != 9 || j.MaxRetries != 7 || j.WorkflowID != "wf-1" || j.Stage != "transcode":
		e.t.Fatalf("priority %d max_retries %d workflow %q stage %q", j.Priority, j.MaxRetries, j.WorkflowID, j.Stage)
	case !jsonEqual(j.Payload, p.Payload) || !jsonEqual(j.Metadata, p.Metadata) || !slices.Equal(j.Tags, p.Tags):
		e.t.Fatalf("payload %s metadata %s tags %v", j.Payload, j.Metadata, j.Tags)
	}
})

var _ = add("InsertFastIDsInOrder", func(e *env) {
	ps := make([]*driver.InsertParams, 50)
	for i := range ps {
		ps[i] = job("fast")
		ps[i].Payload = json.RawMessage(`{"i": ` + string(rune('0'+i%10)) + `}`)
		ps[i].Tags = []string{"bulk"}
	}
	ps[1].RunAt = time.Now().Add(time.Hour)
	ps[2].Paused = true
	got, err := e.d.JobInsertFast(e.ctx, ps)
	if err != nil || len(got) != len(ps) {
		e.t.Fatalf("JobInsertFast: %d ids, err %v", len(got), err)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			e.t.Fatalf("ids not in order: %v", got)
		}
	}
	for i, id := range got {
		j := e.get(id)
		if !jsonEqual(j.Payload, ps[i].Payload) || !slices.Equal(j.Tags, []string{"bulk"}) {
			e.t.Fatalf("job %d: payload %s tags %v, want %s", id, j.Payload, j.Tags, ps[i].Payload)
		}
	}
	e.wantState(got[0], driver.StatePending)
	e.wantState(got[1], driver.StateScheduled)
	e.wantState(got[2], driver.StatePaused)
})

// A small batch keeps the order and the states of a large one, and is
// stored all or nothing.
var _ = add("InsertFastSmallBatch", func(e *env) {
	ps := []*driver.InsertParams{job("small"), job("small"), job("small")}
	ps[1].RunAt = time.Now().Add(time.Hour)
	ps[2].Paused = true
	got, err := e.d.JobInsertFast(e.ctx, ps)
	if err != nil || len(got) != 3 || got[0] >= got[1] || got[1] >= got[2] {
		e.t.Fatalf("JobInsertFast of 3: ids %v, err %v", got, err)
	}
	e.wantState(got[0], driver.StatePending)
	e.wantState(got[1], driver.StateScheduled)
	e.wantState(got[2], driver.StatePaused)
	bad := []*driver.InsertParams{job("small-bad"), job("small-bad"), job("small-bad")}
	bad[2].Priority = 11 // refused by the table's check, after the first two
	if ids, err := e.d.JobInsertFast(e.ctx, bad); err == nil {
		e.t.Fatalf("JobInsertFast with a priority of 11: ids %v, no error", ids)
	}
	jobs, err := e.admin().JobList(e.ctx, driver.ListParams{Kind: "small-bad", Limit: 10})
	if err != nil || len(jobs) != 0 {
		e.t.Fatalf("after the refused batch: %d jobs of its kind stored, err %v", len(jobs), err)
	}
})

func keyed(key, policy string, window time.Duration) *driver.InsertParams {
	p := job("keyed")
	p.IdempotencyKey, p.UniquePolicy, p.UniqueWindow = key, policy, window
	return p
}

var _ = add("IdempotencyActive", func(e *env) {
	first := e.insertMany(keyed("k1", "active", 0))[0]
	again := e.insertMany(keyed("k1", "active", 0))[0]
	if first.Duplicate || !again.Duplicate || again.Job.ID != first.Job.ID {
		e.t.Fatalf("second insert: duplicate %v id %d, want the live job %d", again.Duplicate, again.Job.ID, first.Job.ID)
	}
	other := keyed("k1", "active", 0)
	other.Tenant = "other"
	if r := e.insertMany(other)[0]; r.Duplicate {
		e.t.Fatalf("another tenant's key matched")
	}
	e.complete(e.claimID(first.Job, "w1", lease), "")
	after := e.insertMany(keyed("k1", "active", 0))[0]
	if after.Duplicate || after.Job.ID == first.Job.ID {
		e.t.Fatalf("after the job finished: duplicate %v id %d, want a new job", after.Duplicate, after.Job.ID)
	}
})

var _ = add("IdempotencyWindow", func(e *env) {
	const window = time.Second
	first := e.insertMany(keyed("w1", "window", window))[0]
	e.complete(e.claimID(first.Job, "w1", lease), "")
	again := e.insertMany(keyed("w1", "window", window))[0]
	if !again.Duplicate || again.Job.ID != first.Job.ID || again.Job.State != driver.StateCompleted {
		e.t.Fatalf("within the window: duplicate %v id %d state %s, want the finished job %d",
			again.Duplicate, again.Job.ID, again.Job.State, first.Job.ID)
	}
	time.Sleep(window + 200*time.Millisecond)
	after := e.insertMany(keyed("w1", "window", window))[0]
	if after.Duplicate || after.Job.ID == first.Job.ID {
		e.t.Fatalf("after the window: duplicate %v id %d, want a new job", after.Duplicate, after.Job.ID)
	}
})

var _ = add("IdempotencyConcurrent", func(e *env) {
	for _, policy := range []string{"active", "window"} {
		var wg sync.WaitGroup
		res := make([]driver.InsertResult, 16)
		errs := make([]error, 16)
		for i := range res {
			wg.Go(func() {
				r, err := e.d.JobInsertMany(e.ctx, []*driver.InsertParams{keyed("c-"+policy, policy, time.Hour)})
				if err == nil {
					res[i] = r[0]
				}
				errs[i] = err
			})
		}
		wg.Wait()
		created := 0
		for i, r := range res {
			if errs[i] != nil {
				e.t.Fatalf("%s: insert %d: %v", policy, i, errs[i])
			}
			if !r.Duplicate {
				created++
			}
			if r.Job.ID != res[0].Job.ID {
				e.t.Fatalf("%s: inserts answered jobs %d and %d", policy, res[0].Job.ID, r.Job.ID)
			}
		}
		if created != 1 {
			e.t.Fatalf("%s: %d inserts created a job, want 1", policy, created)
		}
	}
})

var _ = add("TransactionCommitRollback", func(e *env) {
	tx, err := e.d.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := tx.JobInsertMany(e.ctx, []*driver.InsertParams{job("tx")})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Rollback(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	_, err = e.d.JobGet(e.ctx, r[0].Job.ID)
	e.wantErr(err, driver.ErrNotFound, "job of a rolled back insert")
	tx, err = e.d.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	r, err = tx.JobInsertMany(e.ctx, []*driver.InsertParams{job("tx")})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := tx.JobInsertMany(e.ctx, []*driver.InsertParams{{Kind: "bad", Queue: "default", DependsOn: []int64{1 << 40}}}); err == nil {
		e.t.Fatal("insert with a missing dependency in a transaction succeeded")
	}
	if err := tx.Commit(e.ctx); err != nil {
		e.t.Fatalf("commit after a failed statement: %v", err)
	}
	e.wantState(r[0].Job.ID, driver.StatePending)
})

// A batch that sets no op, metadata, tags, workflow or stage reads back with
// the same defaults as one that does set them on another job.
var _ = add("InsertFastPlainBatch", func(e *env) {
	plain := []*driver.InsertParams{job("plain"), job("plain")}
	plain[1].Priority, plain[1].Tenant = 8, "acme"
	full := []*driver.InsertParams{job("full"), job("full")}
	full[1].Metadata, full[1].Op = json.RawMessage(`{"by":"ada"}`), "ingest"
	for _, batch := range [][]*driver.InsertParams{plain, full} {
		ids, err := e.d.JobInsertFast(e.ctx, batch)
		if err != nil || len(ids) != len(batch) {
			e.t.Fatalf("JobInsertFast: %v, %v", ids, err)
		}
		for i, id := range ids {
			j, p := e.get(id), batch[i]
			wantMeta := json.RawMessage(`{}`)
			if len(p.Metadata) > 0 {
				wantMeta = p.Metadata
			}
			if j.State != driver.StatePending || j.Priority != p.Priority || j.Tenant != p.Tenant || j.Op != p.Op ||
				!jsonEqual(j.Metadata, wantMeta) || len(j.Tags) != 0 || j.Tags == nil || j.WorkflowID != "" ||
				j.Stage != "" || j.MaxRetries != 3 || !jsonEqual(j.Payload, json.RawMessage(`{}`)) {
				e.t.Fatalf("job %d of kind %s: %+v", id, j.Kind, j)
			}
		}
	}
})

// Every column JobInsertFast writes reads back as given, in a batch that
// mixes plain jobs with full ones, inside a caller's transaction too; a
// document the database refuses fails the batch and stores none of it.
var _ = add("InsertFastEveryColumn", func(e *env) {
	at := time.Date(1999, 12, 31, 23, 59, 59, 123456789, time.UTC) // before PostgreSQL's epoch
	full := job("ünïcode-kind")
	full.Op, full.Queue, full.Tenant, full.Priority, full.MaxRetries = "ingest", "media", "acme", 10, 0
	full.Payload, full.Metadata = json.RawMessage(`{"s": "naïve \"q\"", "n": [1, 2.5, null]}`), json.RawMessage(`{"by": "ada"}`)
	full.Tags, full.WorkflowID, full.Stage, full.RunAt = []string{"red", "", "blé"}, "wf-9", "encode", at
	plain := job("plain")
	plain.Priority = 0
	check := func(ids []int64) {
		j := e.get(ids[0])
		switch {
		case j.Kind != full.Kind || j.Op != "ingest" || j.Queue != "media" || j.Tenant != "acme" || j.State != driver.StatePending:
			e.t.Fatalf("kind/op/queue/tenant/state: %q %q %q %q %s", j.Kind, j.Op, j.Queue, j.Tenant, j.State)
		case j.Priority != 10 || j.MaxRetries != 0 || j.WorkflowID != "wf-9" || j.Stage != "encode":
			e.t.Fatalf("priority %d max_retries %d workflow %q stage %q", j.Priority, j.MaxRetries, j.WorkflowID, j.Stage)
		case !jsonEqual(j.Payload, full.Payload) || !jsonEqual(j.Metadata, full.Metadata) || !slices.Equal(j.Tags, full.Tags):
			e.t.Fatalf("payload %s metadata %s tags %q", j.Payload, j.Metadata, j.Tags)
		case !j.RunAt.Equal(at.Truncate(time.Microsecond)):
			e.t.Fatalf("run_at %s, want %s", j.RunAt, at.Truncate(time.Microsecond))
		}
		if p := e.get(ids[1]); p.Priority != 0 || p.Op != "" || p.WorkflowID != "" || len(p.Tags) != 0 || !jsonEqual(p.Metadata, json.RawMessage(`{}`)) {
			e.t.Fatalf("plain job beside a full one: %+v", p)
		}
	}
	ids, err := e.d.JobInsertFast(e.ctx, []*driver.InsertParams{full, plain})
	if err != nil || len(ids) != 2 {
		e.t.Fatalf("JobInsertFast: %v, %v", ids, err)
	}
	check(ids)

	tx, err := e.d.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	ids, err = tx.JobInsertFast(e.ctx, []*driver.InsertParams{full, plain})
	if err != nil || len(ids) != 2 {
		e.t.Fatalf("JobInsertFast in a transaction: %v, %v", ids, err)
	}
	if err := tx.Commit(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	check(ids)

	bad := job("fast-bad")
	bad.Payload = json.RawMessage(`{"unclosed": `)
	if ids, err := e.d.JobInsertFast(e.ctx, []*driver.InsertParams{job("fast-good"), bad}); err == nil {
		e.t.Fatalf("a batch with a malformed payload was stored: %v", ids)
	}
	badMeta := job("fast-bad")
	badMeta.Metadata = json.RawMessage(`not json`)
	if _, err := e.d.JobInsertMany(e.ctx, []*driver.InsertParams{job("fast-good"), badMeta}); err == nil {
		e.t.Fatal("a batch with malformed metadata was stored")
	}
	if _, err := e.d.JobInsertStart(e.ctx, bad, driver.StartParams{WorkerID: "w", Lease: time.Minute}); err == nil {
		e.t.Fatal("a job with a malformed payload was inserted and started")
	}
	for _, kind := range []string{"fast-good", "fast-bad"} {
		if js, err := e.admin().JobList(e.ctx, driver.ListParams{Kind: kind, Limit: 10}); err != nil || len(js) != 0 {
			e.t.Fatalf("jobs of kind %s after the failed batch: %d, %v", kind, len(js), err)
		}
	}
})
