package skiplock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
)

// hookClient is a client on drv working sleepArgs jobs with work, set up
// further by mod.
func hookClient(t *testing.T, drv driver.Driver, work func(context.Context, *skiplock.Job[sleepArgs]) error,
	mod func(*skiplock.Config)) *skiplock.Client {
	t.Helper()
	workers := skiplock.NewWorkers()
	skiplock.MustAddWorker(workers, skiplock.WorkFunc[sleepArgs](work))
	cfg := &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {MaxWorkers: 4}},
		Workers: workers, FetchPollInterval: 50 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }}
	if mod != nil {
		mod(cfg)
	}
	c, err := skiplock.NewClient(drv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type ctxKey struct{}

func TestWorkMiddleware(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var mu sync.Mutex
			var trail []string
			record := func(s string) { mu.Lock(); trail = append(trail, s); mu.Unlock() }
			mw := func(name string) skiplock.WorkMiddleware {
				return func(ctx context.Context, job *skiplock.JobRow, next func(context.Context) error) error {
					record(fmt.Sprintf("%s>%s#%d", name, job.Kind, job.Attempt))
					err := next(context.WithValue(ctx, ctxKey{}, name))
					var pe *skiplock.PanicError
					if errors.As(err, &pe) {
						record(name + "<panic:" + fmt.Sprint(pe.Value))
						return skiplock.Permanent(err)
					}
					record(fmt.Sprintf("%s<%v", name, err))
					return err
				}
			}
			c := hookClient(t, open(t), func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
				record("work:" + ctx.Value(ctxKey{}).(string))
				if j.Args.N == 1 {
					panic("boom")
				}
				return nil
			}, func(cfg *skiplock.Config) { cfg.WorkMiddleware = []skiplock.WorkMiddleware{mw("outer"), mw("inner")} })
			if _, err := c.Insert(ctx, sleepArgs{N: 0}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Insert(ctx, sleepArgs{N: 1}, nil); err != nil {
				t.Fatal(err)
			}
			out, err := c.Drain(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"outer>sleep#1", "inner>sleep#1", "work:inner", "inner<<nil>", "outer<<nil>",
				"outer>sleep#1", "inner>sleep#1", "work:inner", "inner<panic:boom", "outer<panic:boom"}
			if !slices.Equal(trail, want) {
				t.Fatalf("trail\n%q\nwant\n%q", trail, want)
			}
			if len(out) != 2 || out[0].Job.State != skiplock.StateCompleted || out[1].Job.State != skiplock.StateFailed ||
				out[1].Job.Errors[0].Type != "panic" || !strings.Contains(out[1].Job.Errors[0].Stack, "hooks_test.go") {
				t.Fatalf("outcomes %+v", out)
			}
		})
	}
}

func TestInsertMiddleware(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var seen []int64
			stamp := func(ctx context.Context, jobs []*skiplock.InsertJob, next func(context.Context) error) error {
				for _, j := range jobs {
					if j.Queue == "forbidden" {
						return fmt.Errorf("queue %q is closed", j.Queue)
					}
					if err := j.SetMetadata("origin", "test"); err != nil {
						return err
					}
					j.Tags = append(j.Tags, "stamped")
				}
				if err := next(ctx); err != nil {
					return err
				}
				for _, j := range jobs {
					seen = append(seen, j.ID)
				}
				return nil
			}
			c := hookClient(t, open(t), func(context.Context, *skiplock.Job[sleepArgs]) error { return nil },
				func(cfg *skiplock.Config) { cfg.InsertMiddleware = []skiplock.InsertMiddleware{stamp} })
			res, err := c.Insert(ctx, sleepArgs{N: 1}, &skiplock.InsertOpts{Metadata: []byte(`{"a":1}`)})
			if err != nil {
				t.Fatal(err)
			}
			var origin string
			var a int
			if ok, err := skiplock.MetadataValue(res.Job, "origin", &origin); !ok || err != nil || origin != "test" {
				t.Fatalf("metadata %s: %v %v", res.Job.Metadata, ok, err)
			}
			if ok, _ := skiplock.MetadataValue(res.Job, "a", &a); !ok || a != 1 || !slices.Contains(res.Job.Tags, "stamped") {
				t.Fatalf("job %s %v", res.Job.Metadata, res.Job.Tags)
			}
			ids, err := c.InsertMany(ctx, []skiplock.InsertManyParams{{Args: sleepArgs{N: 2}}, {Args: sleepArgs{N: 3}}})
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]int64{res.Job.ID}, ids...); !slices.Equal(seen, want) {
				t.Fatalf("middleware saw ids %v, want %v", seen, want)
			}
			_, err = c.Insert(ctx, sleepArgs{N: 4}, &skiplock.InsertOpts{Queue: "forbidden"})
			if err == nil || !strings.Contains(err.Error(), "closed") {
				t.Fatalf("refused insert: %v", err)
			}
			jobs, err := c.JobList(ctx, skiplock.JobListParams{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 3 {
				t.Fatalf("%d jobs stored, want 3 (the refused one is not)", len(jobs))
			}
			for _, j := range jobs {
				if ok, _ := skiplock.MetadataValue(j, "origin", &origin); !ok {
					t.Fatalf("job %d without origin: %s", j.ID, j.Metadata)
				}
			}
		})
	}
}

func TestErrorHandler(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			type report struct {
				job *skiplock.JobRow
				err error
			}
			var reports []report
			var snoozed atomic.Bool
			c := hookClient(t, open(t), func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
				switch j.Args.N {
				case 1:
					return errors.New("flaky")
				case 2:
					panic("kaput")
				case 3:
					if !snoozed.Swap(true) { // a snooze spends no attempt
						return skiplock.Snooze(0)
					}
				}
				return nil
			}, func(cfg *skiplock.Config) {
				cfg.ErrorHandler = func(ctx context.Context, job *skiplock.JobRow, err error) {
					reports = append(reports, report{job, err})
					if job.Attempt == 2 {
						panic("the handler itself fails")
					}
				}
			})
			for _, n := range []int{1, 2, 3} {
				if _, err := c.Insert(ctx, sleepArgs{N: n}, &skiplock.InsertOpts{MaxRetries: skiplock.Int(1)}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			// flaky twice (retry, then failed), the panic twice; the snooze never.
			if len(reports) != 4 {
				t.Fatalf("%d reports, want 4: %+v", len(reports), reports)
			}
			var pe *skiplock.PanicError
			for _, r := range reports {
				if r.job.Kind != "sleep" {
					t.Fatalf("report %+v", r)
				}
				if errors.As(r.err, &pe) && (pe.Value != "kaput" || !strings.Contains(pe.Stack, "hooks_test.go")) {
					t.Fatalf("panic report %+v", pe)
				}
			}
			last := reports[len(reports)-1]
			if !errors.As(last.err, &pe) || last.job.State != skiplock.StateFailed || last.job.Attempt != 2 {
				t.Fatalf("last report: job %+v err %v", last.job, last.err)
			}
		})
	}
}

// awaitEvent reads events until one of kind about job id arrives.
func awaitEvent(t *testing.T, ch <-chan skiplock.Event, kind skiplock.EventKind, id int64) skiplock.Event {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case e := <-ch:
			if e.Kind == kind && e.Job != nil && e.Job.ID == id {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event for job %d", kind, id)
		}
	}
}

func TestSubscribeEvents(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			started := make(chan int64, 10)
			var snoozed atomic.Bool
			c := hookClient(t, open(t), func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
				switch j.Args.N {
				case 1:
					return skiplock.Permanent(errors.New("bad"))
				case 2:
					if j.Attempt == 1 {
						return errors.New("again")
					}
				case 3:
					if !snoozed.Swap(true) {
						return skiplock.Snooze(0)
					}
				case 4:
					started <- j.ID
					<-ctx.Done()
					return ctx.Err()
				}
				return j.SetResult(map[string]int{"n": j.Args.N})
			}, nil)
			all, stopAll := c.Subscribe()
			defer stopAll()
			failed, stopFailed := c.Subscribe(skiplock.EventJobFailed)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Stop(ctx)
			ids := map[int]int64{}
			for n := range 5 {
				res, err := c.Insert(ctx, sleepArgs{N: n}, nil)
				if err != nil {
					t.Fatal(err)
				}
				ids[n] = res.Job.ID
			}
			if e := awaitEvent(t, failed, skiplock.EventJobFailed, ids[1]); e.Job.State != skiplock.StateFailed ||
				e.Err == nil || !strings.Contains(e.Err.Error(), "bad") {
				t.Fatalf("failed event %+v %v", e.Job, e.Err)
			}
			<-started
			if _, err := c.JobCancel(ctx, ids[4]); err != nil {
				t.Fatal(err)
			}
			type seen struct {
				kind skiplock.EventKind
				id   int64
			}
			want := map[seen]bool{{skiplock.EventJobCompleted, ids[0]}: true, {skiplock.EventJobFailed, ids[1]}: true,
				{skiplock.EventJobRetried, ids[2]}: true, {skiplock.EventJobSnoozed, ids[3]}: true,
				{skiplock.EventJobCancelled, ids[4]}: true}
			for len(want) > 0 {
				var e skiplock.Event
				select {
				case e = <-all:
				case <-ctx.Done():
					t.Fatalf("events still awaited: %v", want)
				}
				delete(want, seen{e.Kind, e.Job.ID})
				if e.Kind == skiplock.EventJobCompleted && e.Job.ID == ids[0] &&
					(e.Job.State != skiplock.StateCompleted || string(e.Job.Result) != `{"n":0}`) {
					t.Fatalf("completed event %+v", e.Job)
				}
			}
			stopFailed()
			stopFailed() // twice is fine
			if _, ok := <-failed; ok {
				// Drain what was buffered; the channel ends closed.
				for range failed {
				}
			}
			if c.EventsDropped() != 0 {
				t.Fatalf("%d events dropped", c.EventsDropped())
			}
		})
	}
}

func TestWorkJobAndDrain(t *testing.T) {
	t.Parallel()
	for name, open := range lifecycleDrivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c := hookClient(t, open(t), func(ctx context.Context, j *skiplock.Job[sleepArgs]) error {
				if j.Args.N < 0 {
					return skiplock.Permanent(errors.New("negative"))
				}
				return j.SetResult(j.Args.N * 2)
			}, nil)
			// WorkJob with a worker the client does not have registered.
			o, err := skiplock.WorkJob(ctx, c, skiplock.WorkFunc[EmailArgs](func(ctx context.Context, j *skiplock.Job[EmailArgs]) error {
				if err := j.Progress(ctx, 50, "half"); err != nil {
					return err
				}
				return j.SetResult("sent to " + j.Args.To)
			}), EmailArgs{To: "ada@example.com"}, nil)
			if err != nil || o.Err != nil || o.Job.State != skiplock.StateCompleted || string(o.Job.Result) != `"sent to ada@example.com"` {
				t.Fatalf("WorkJob: %+v, %v", o, err)
			}
			if _, err := skiplock.WorkJob(ctx, c, skiplock.WorkFunc[EmailArgs](nil), EmailArgs{},
				&skiplock.InsertOpts{IdempotencyKey: "k"}); err == nil {
				t.Fatal("WorkJob took a job with an idempotency key")
			}
			for _, n := range []int{1, -1, 2} {
				if _, err := c.Insert(ctx, sleepArgs{N: n}, nil); err != nil {
					t.Fatal(err)
				}
			}
			out, err := c.Drain(ctx)
			if err != nil || len(out) != 3 {
				t.Fatalf("drain: %d outcomes, %v", len(out), err)
			}
			var results []string
			for _, o := range out {
				results = append(results, fmt.Sprintf("%s:%s:%v", o.Job.State, o.Job.Result, o.Err != nil))
			}
			slices.Sort(results)
			want := []string{"completed:2:false", "completed:4:false", "failed::true"}
			if !slices.Equal(results, want) {
				t.Fatalf("outcomes %q, want %q", results, want)
			}
			if again, err := c.Drain(ctx); err != nil || len(again) != 0 {
				t.Fatalf("second drain: %v %v", again, err)
			}
		})
	}
}
