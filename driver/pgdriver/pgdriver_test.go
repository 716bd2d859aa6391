package pgdriver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/drivertest"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/pgtest"
)

func TestConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T) driver.Driver {
		d, _ := pgtest.Schema(t)
		return d
	}, func(t *testing.T, d driver.Driver, id int64) { pgtest.SetNextJobID(t, d.(*pgdriver.Driver), id) })
}

// insertFast inserts n jobs of queue "default", priority 5 and three
// retries, each as job(i, p) leaves it, and answers them and their ids.
func insertFast(t *testing.T, d *pgdriver.Driver, n int, job func(i int, p *driver.InsertParams)) ([]*driver.InsertParams, []int64) {
	t.Helper()
	params := make([]*driver.InsertParams, n)
	for i := range params {
		params[i] = &driver.InsertParams{Kind: "a", Queue: "default", Priority: 5, MaxRetries: 3}
		if job != nil {
			job(i, params[i])
		}
	}
	ids, err := d.JobInsertFast(t.Context(), params)
	if err != nil || len(ids) != n {
		t.Fatalf("JobInsertFast: %d ids of %d, %v", len(ids), n, err)
	}
	return params, ids
}

// TestClaimSkipLockedNeverDoubleClaims claims from several pools at once:
// FOR UPDATE SKIP LOCKED hands each job to one of them.
func TestClaimSkipLockedNeverDoubleClaims(t *testing.T) {
	d, url := pgtest.Schema(t)
	ctx := t.Context()
	const n = 2000
	insertFast(t, d, n, nil)
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	for p := range 4 {
		pool, err := pgxpool.New(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		other := pgdriver.New(pool)
		for w := range 3 {
			worker := fmt.Sprintf("p%d-w%d", p, w)
			wg.Go(func() {
				for {
					jobs, err := other.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: worker, Max: 7,
						DefaultLease: time.Minute})
					if err != nil {
						t.Error(err)
						return
					}
					if len(jobs) == 0 {
						return
					}
					mu.Lock()
					for _, j := range jobs {
						if prev, ok := seen[j.ID]; ok {
							t.Errorf("job %d claimed by %s and %s", j.ID, prev, worker)
						}
						seen[j.ID] = worker
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("claimed %d jobs, want %d", len(seen), n)
	}
}

// TestNotifyWakesOtherPools: an insert notified through one pool reaches a
// listener on another (another process, in production).
func TestNotifyWakesOtherPools(t *testing.T) {
	d, url := pgtest.Schema(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	listener := pgdriver.New(pool)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	heard := make(chan string, 10)
	go func() { _ = listener.Notifier().Listen(ctx, func(q string) { heard <- q }, func(int64) {}) }()
	for {
		if err := d.QueueNotify(ctx, []string{"media"}); err != nil {
			t.Fatal(err)
		}
		select {
		case q := <-heard:
			if q == "" {
				continue // listening: every queue may have work
			}
			if q != "media" {
				t.Fatalf("heard %q", q)
			}
			return
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("no notification arrived")
		}
	}
}

// TestArchivePrepareMovesDefaultPartitionRows: jobs finished on a day
// without a partition land in the default one and move when it is made.
func TestArchivePrepareMovesDefaultPartitionRows(t *testing.T) {
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	day := time.Now().UTC().Truncate(24 * time.Hour)
	name := "skiplock_jobs_archive_" + day.Format("20060102")
	if _, err := d.Pool().Exec(ctx, "DROP TABLE "+name); err != nil {
		t.Fatal(err)
	}
	res, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "a", Queue: "default", Priority: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.JobCancel(ctx, res[0].Job.ID); err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		var n int
		if err := d.Pool().QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count("skiplock_jobs_archive_default") != 1 {
		t.Fatal("finished job is not in the default partition")
	}
	if err := d.ArchivePrepare(ctx, day.Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if count("skiplock_jobs_archive_default") != 0 || count(name) != 1 {
		t.Fatalf("default partition %d rows, %s %d rows; want the row moved", count("skiplock_jobs_archive_default"),
			name, count(name))
	}
	if j, err := d.JobGet(ctx, res[0].Job.ID); err != nil || j.State != driver.StateCancelled {
		t.Fatalf("JobGet after the move: %+v, %v", j, err)
	}
}

// TestBatchesLockInOneOrder: heartbeats and completions of the same jobs,
// each batch given in a different order, run at once without deadlocking:
// the driver locks a batch in id order whatever order it was given.
func TestBatchesLockInOneOrder(t *testing.T) {
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	const n = 500
	insertPending(t, d, n)
	claimed, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Max: n, DefaultLease: time.Minute})
	if err != nil || len(claimed) != n {
		t.Fatalf("claim: %d jobs, %v", len(claimed), err)
	}
	// order k of the claimed jobs: ascending, descending, or interleaved.
	order := func(k int) []*driver.Job {
		o := slices.Clone(claimed)
		switch k % 3 {
		case 1:
			slices.Reverse(o)
		case 2:
			rand.New(rand.NewPCG(uint64(k), 1)).Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
		}
		return o
	}
	beat := func(k int) error {
		p := driver.HeartbeatParams{WorkerID: "w"}
		for _, j := range order(k) {
			p.IDs, p.Attempts, p.Leases = append(p.IDs, j.ID), append(p.Attempts, j.Attempt), append(p.Leases, time.Minute)
		}
		_, err := d.JobHeartbeat(ctx, p)
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*20+1)
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				if err := beat(g + i); err != nil {
					errs <- fmt.Errorf("heartbeat: %w", err)
					return
				}
			}
		})
	}
	wg.Go(func() {
		var batch []driver.CompleteParams
		for _, j := range order(2) {
			batch = append(batch, driver.CompleteParams{HeldJob: driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: "w"}})
		}
		done, err := d.JobCompleteMany(ctx, batch)
		if err == nil && len(done) != n {
			err = fmt.Errorf("%d of %d jobs completed", len(done), n)
		}
		if err != nil {
			errs <- fmt.Errorf("complete: %w", err)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestScanManyDistinctNames reads back more distinct kinds than the row
// scanner keeps shared strings for: past that bound each row still gets its
// own values.
func TestScanManyDistinctNames(t *testing.T) {
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	const n = 300
	params, ids := insertFast(t, d, n, func(i int, p *driver.InsertParams) {
		p.Kind, p.Tenant = fmt.Sprintf("kind-%d", i), fmt.Sprintf("t%d", i%7)
	})
	kinds := make([]string, n)
	for i := range kinds {
		kinds[i] = params[i].Kind
	}
	jobs, err := d.JobClaim(ctx, driver.ClaimParams{Queue: "default", WorkerID: "w", Kinds: kinds, Max: n,
		DefaultLease: time.Minute})
	if err != nil || len(jobs) != n {
		t.Fatalf("claimed %d of %d: %v", len(jobs), n, err)
	}
	for _, j := range jobs {
		i := slices.Index(ids, j.ID)
		if i < 0 || j.Kind != params[i].Kind || j.Tenant != params[i].Tenant || j.WorkerID != "w" ||
			j.State != driver.StateRunning || j.StartedAt == nil || j.LeaseUntil == nil || j.HeartbeatAt == nil {
			t.Fatalf("job %d (insert %d): kind %q tenant %q worker %q state %s", j.ID, i, j.Kind, j.Tenant, j.WorkerID, j.State)
		}
	}
	// Each job's times are its own, though they come from one block.
	*jobs[0].StartedAt = time.Time{}
	if jobs[1].StartedAt.IsZero() || jobs[0].LeaseUntil.IsZero() {
		t.Fatal("jobs share a time")
	}
}

// TestInsertFastStreamsChunks inserts a batch whose COPY stream spans many
// chunks, with one row larger than a chunk, and reads every job back.
func TestInsertFastStreamsChunks(t *testing.T) {
	d, _ := pgtest.Schema(t)
	ctx := t.Context()
	const n = 3000
	params, ids := insertFast(t, d, n, func(i int, p *driver.InsertParams) {
		p.Kind, p.Payload = "big", []byte(fmt.Sprintf(`{"i": %d, "pad": "%0100d"}`, i, i))
		switch i {
		case 1500:
			p.Payload = []byte(fmt.Sprintf(`{"i": 1500, "pad": "%0200000d"}`, 7)) // bigger than a chunk
		case n - 1:
			p.Tags = []string{"last"} // the full column set
		}
	})
	for _, i := range []int{0, 1, 1499, 1500, 1501, 2998, 2999} {
		j, err := d.JobGet(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		var got, want map[string]any
		if err := json.Unmarshal(j.Payload, &got); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(params[i].Payload, &want); err != nil {
			t.Fatal(err)
		}
		wantTags := params[i].Tags
		if wantTags == nil {
			wantTags = []string{}
		}
		if got["i"] != want["i"] || got["pad"] != want["pad"] || !slices.Equal(j.Tags, wantTags) {
			t.Fatalf("job %d (insert %d): payload of %d bytes, tags %v", j.ID, i, len(j.Payload), j.Tags)
		}
	}
	list, err := d.JobList(ctx, driver.ListParams{Kind: "big", Limit: n + 1})
	if err != nil || len(list) != n {
		t.Fatalf("listed %d of %d: %v", len(list), n, err)
	}
}

// TestInsertCarriesItsWakeUp: a job inserted with Wake is committed with
// its queue's notification, which a listener on another pool hears.
func TestInsertCarriesItsWakeUp(t *testing.T) {
	d, url := pgtest.Schema(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	heard := make(chan string, 10)
	go func() { _ = pgdriver.New(pool).Notifier().Listen(ctx, func(q string) { heard <- q }, func(int64) {}) }()
	select {
	case <-heard: // listening
	case <-ctx.Done():
		t.Fatal("the listener did not start")
	}
	res, err := d.JobInsertMany(ctx, []*driver.InsertParams{{Kind: "k", Queue: "media", Wake: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Woken {
		t.Fatal("the insert did not say its wake-up went out with it")
	}
	if j, err := d.JobGet(ctx, res[0].Job.ID); err != nil || j.State != driver.StatePending {
		t.Fatalf("job after the insert: %+v, %v; want pending", j, err)
	}
	for {
		select {
		case q := <-heard:
			if q == "media" {
				return
			}
		case <-ctx.Done():
			t.Fatal("no notification arrived")
		}
	}
}
