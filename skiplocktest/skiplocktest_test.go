package skiplocktest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/driver/sqlitedriver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/skiplockpgx"
	"github.com/skiplock/skiplock/skiplocksql"
	"github.com/skiplock/skiplock/skiplocktest"
)

type mailArgs struct {
	To string `json:"to"`
}

func (mailArgs) Kind() string { return "mail" }

type smsArgs struct {
	To string `json:"to"`
}

func (smsArgs) Kind() string { return "sms" }

// dbs are the databases every case runs on: a driver, and a way to begin
// a transaction on it and insert through the typed InsertTx.
type db struct {
	open func(t *testing.T) driver.Driver
	// begin answers a transaction, an insert in it, and its rollback.
	begin func(t *testing.T, d driver.Driver) (tx any, insert func(*skiplock.Client, skiplock.JobArgs) error, rollback func())
}

var dbs = map[string]db{
	"sqlite": {
		open: func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
		begin: func(t *testing.T, d driver.Driver) (any, func(*skiplock.Client, skiplock.JobArgs) error, func()) {
			tx, err := d.(*sqlitedriver.Driver).DB().Begin()
			if err != nil {
				t.Fatal(err)
			}
			return tx, func(c *skiplock.Client, a skiplock.JobArgs) error {
				_, err := skiplocksql.InsertTx(context.Background(), c, tx, a, nil)
				return err
			}, func() { _ = tx.Rollback() }
		},
	},
	"postgres": {
		open: func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
		begin: func(t *testing.T, d driver.Driver) (any, func(*skiplock.Client, skiplock.JobArgs) error, func()) {
			tx, err := d.(*pgdriver.Driver).Pool().Begin(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return tx, func(c *skiplock.Client, a skiplock.JobArgs) error {
				_, err := skiplockpgx.InsertTx(context.Background(), c, tx, a, nil)
				return err
			}, func() { _ = tx.Rollback(context.Background()) }
		},
	},
}

// fakeT records a helper's failure instead of ending the test.
type fakeT struct {
	testing.TB
	failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	panic(f)
}

// fails runs fn with a fakeT and answers its failure message ("" if none).
func fails(t *testing.T, fn func(tb testing.TB)) (msg string) {
	f := &fakeT{TB: t}
	defer func() {
		if r := recover(); r != nil && r != f {
			panic(r)
		}
		msg = f.failed
	}()
	fn(f)
	return ""
}

func TestRequireInserted(t *testing.T) {
	t.Parallel()
	for name, d := range dbs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			drv := d.open(t)
			client, err := skiplock.NewClient(drv, nil)
			if err != nil {
				t.Fatal(err)
			}
			if msg := fails(t, func(tb testing.TB) { skiplocktest.RequireInserted[mailArgs](ctx, tb, client, nil) }); !strings.Contains(msg, `no job of kind "mail"`) {
				t.Fatalf("empty: %q", msg)
			}
			skiplocktest.RequireNotInserted[mailArgs](ctx, t, client, nil)
			if _, err := client.Insert(ctx, mailArgs{To: "ada"}, &skiplock.InsertOpts{Queue: "mail", Priority: skiplock.Int(7), Tags: []string{"welcome"}}); err != nil {
				t.Fatal(err)
			}
			job := skiplocktest.RequireInserted[mailArgs](ctx, t, client, &skiplocktest.RequireOpts{Queue: "mail",
				Priority: skiplock.Int(7), Tags: []string{"welcome"}, State: skiplock.StatePending})
			if job.Args.To != "ada" {
				t.Fatalf("args %+v", job.Args)
			}
			msg := fails(t, func(tb testing.TB) {
				skiplocktest.RequireInserted[mailArgs](ctx, tb, client, &skiplocktest.RequireOpts{Queue: "other"})
			})
			if !strings.Contains(msg, "queue is mail, want other") {
				t.Fatalf("wrong queue: %q", msg)
			}
			skiplocktest.RequireNotInserted[mailArgs](ctx, t, client, &skiplocktest.RequireOpts{Queue: "other"})
			if msg := fails(t, func(tb testing.TB) { skiplocktest.RequireNotInserted[mailArgs](ctx, tb, client, nil) }); !strings.Contains(msg, "want none") {
				t.Fatalf("not inserted: %q", msg)
			}
			if _, err := client.Insert(ctx, smsArgs{To: "bob"}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := client.Insert(ctx, mailArgs{To: "cy"}, nil); err != nil {
				t.Fatal(err)
			}
			if msg := fails(t, func(tb testing.TB) { skiplocktest.RequireInserted[mailArgs](ctx, tb, client, nil) }); !strings.Contains(msg, "2 jobs") {
				t.Fatalf("two: %q", msg)
			}
			jobs := skiplocktest.RequireManyInserted(ctx, t, client, []skiplocktest.ExpectedJob{
				{Args: mailArgs{}, Opts: &skiplocktest.RequireOpts{Queue: "mail"}}, {Args: smsArgs{}}, {Args: mailArgs{}}})
			if len(jobs) != 3 || jobs[1].Kind != "sms" {
				t.Fatalf("many: %+v", jobs)
			}
			msg = fails(t, func(tb testing.TB) {
				skiplocktest.RequireManyInserted(ctx, tb, client, []skiplocktest.ExpectedJob{{Args: smsArgs{}}, {Args: mailArgs{}}, {Args: mailArgs{}}})
			})
			if !strings.Contains(msg, `["mail" "sms" "mail"]`) {
				t.Fatalf("order: %q", msg)
			}
		})
	}
}

func TestRequireInsertedTx(t *testing.T) {
	t.Parallel()
	for name, d := range dbs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			drv := d.open(t)
			client, err := skiplock.NewClient(drv, nil)
			if err != nil {
				t.Fatal(err)
			}
			tx, insert, rollback := d.begin(t, drv)
			if err := insert(client, mailArgs{To: "ada"}); err != nil {
				t.Fatal(err)
			}
			if err := insert(client, smsArgs{To: "ada"}); err != nil {
				t.Fatal(err)
			}
			if job := skiplocktest.RequireInsertedTx[mailArgs](ctx, t, client, tx, nil); job.Args.To != "ada" {
				t.Fatalf("args %+v", job.Args)
			}
			skiplocktest.RequireManyInsertedTx(ctx, t, client, tx, []skiplocktest.ExpectedJob{{Args: mailArgs{}}, {Args: smsArgs{}}})
			rollback()
			skiplocktest.RequireNotInserted[mailArgs](ctx, t, client, nil)
		})
	}
}

func TestWorkAndDrain(t *testing.T) {
	t.Parallel()
	for name, d := range dbs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			send := skiplock.WorkFunc[mailArgs](func(ctx context.Context, j *skiplock.Job[mailArgs]) error {
				if j.Args.To == "" {
					return skiplock.Permanent(errors.New("no address"))
				}
				return j.SetResult("sent")
			})
			workers := skiplock.NewWorkers()
			skiplock.MustAddWorker(workers, skiplock.Worker[mailArgs](send))
			client, err := skiplock.NewClient(d.open(t), &skiplock.Config{
				Queues: map[string]skiplock.QueueConfig{"default": {}}, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			o := skiplocktest.Work(ctx, t, client, send, mailArgs{To: "ada"}, nil)
			if o.Err != nil || o.Job.State != skiplock.StateCompleted || string(o.Job.Result) != `"sent"` {
				t.Fatalf("work: %+v", o)
			}
			o = skiplocktest.Work(ctx, t, client, send, mailArgs{}, nil)
			if o.Err == nil || o.Job.State != skiplock.StateFailed {
				t.Fatalf("work: %+v", o)
			}
			for _, to := range []string{"bob", "", "cy"} {
				if _, err := client.Insert(ctx, mailArgs{To: to}, nil); err != nil {
					t.Fatal(err)
				}
			}
			states := map[skiplock.JobState]int{}
			for _, o := range skiplocktest.Drain(ctx, t, client) {
				states[o.Job.State]++
			}
			if states[skiplock.StateCompleted] != 2 || states[skiplock.StateFailed] != 1 {
				t.Fatalf("drained %v", states)
			}
		})
	}
}
