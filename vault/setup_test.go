package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/dbopen"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// database is a migrated test database of one kind: a client on it and
// its URL for processes the test starts.
type database struct {
	name   string
	client *skiplock.Client
	url    string
}

// databases answers a fresh SQLite file and a fresh PostgreSQL schema.
func databases(t *testing.T) []func(t *testing.T) database {
	return []func(t *testing.T) database{
		func(t *testing.T) database {
			path := filepath.Join(t.TempDir(), "skiplock.db")
			d := sqlitetest.Open(t, path)
			return database{name: "sqlite", client: newClient(t, d), url: "sqlite:" + path}
		},
		func(t *testing.T) database {
			d, url := pgtest.Schema(t)
			return database{name: "postgres", client: newClient(t, d), url: url}
		},
	}
}

func forEachDatabase(t *testing.T, fn func(t *testing.T, db database)) {
	for i, open := range databases(t) {
		t.Run([]string{"sqlite", "postgres"}[i], func(t *testing.T) {
			t.Parallel()
			fn(t, open(t))
		})
	}
}

func newClient(t testing.TB, d driver.Driver) *skiplock.Client {
	t.Helper()
	c, err := skiplock.NewClient(d, &skiplock.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clientAt opens a client on url for a helper process.
func clientAt(ctx context.Context, url string) (*skiplock.Client, func(), error) {
	db, err := dbopen.OpenExisting(ctx, url)
	if err != nil {
		return nil, nil, err
	}
	c, err := skiplock.NewClient(db.Driver, &skiplock.Config{})
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return c, db.Close, nil
}

// finishJobs inserts n jobs over two queues and finishes them: most
// complete with a result, every fifth fails with an error, every seventh
// is cancelled before it runs. It answers the finished jobs by id.
func finishJobs(t testing.TB, c *skiplock.Client, n int) []*skiplock.JobRow {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	for start := 0; start < n; start += 1000 {
		var batch []skiplock.InsertManyParams
		for i := start; i < min(n, start+1000); i++ {
			opts := &skiplock.InsertOpts{Queue: []string{"ingest", "mail"}[i%2], Tags: []string{"t", fmt.Sprint(i % 3)},
				Metadata: json.RawMessage(`{"source":"test"}`), MaxRetries: skiplock.Int(0)}
			if i%4 == 0 {
				opts.Tenant, opts.Op, opts.IdempotencyKey = "acme", "ingest", fmt.Sprintf("key-%d", i)
				opts.WorkflowID, opts.Stage = "wf-1", "fetch"
			}
			batch = append(batch, skiplock.InsertManyParams{
				Args: skiplock.RawArgs{KindName: "file", Payload: json.RawMessage(fmt.Sprintf(`{"n":%d,"name":"f\"ü%d"}`, i, i))},
				Opts: opts})
		}
		got, err := c.InsertMany(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got...)
	}
	cancel := map[int64]bool{}
	for i, id := range ids {
		if i%7 == 3 {
			cancel[id] = true
			if _, err := c.JobCancel(ctx, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	claimAndFinish(t, c, "ingest", ids)
	claimAndFinish(t, c, "mail", ids)
	out := make([]*skiplock.JobRow, len(ids))
	for i, id := range ids {
		j, err := c.JobGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.FinishedAt == nil {
			t.Fatalf("job %d is %s, want finished", id, j.State)
		}
		out[i] = j
	}
	return out
}

func claimAndFinish(t testing.TB, c *skiplock.Client, queue string, ids []int64) {
	t.Helper()
	ctx := context.Background()
	pos := map[int64]int{}
	for i, id := range ids {
		pos[id] = i
	}
	for {
		jobs, err := c.Claim(ctx, skiplock.ClaimParams{Queue: queue, WorkerID: "w-" + queue, Max: 1000, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == 0 {
			return
		}
		var done []driver.CompleteParams
		for _, j := range jobs {
			held := driver.HeldJob{ID: j.ID, Attempt: j.Attempt, WorkerID: j.WorkerID}
			if pos[j.ID]%5 == 1 {
				if _, err := c.Fail(ctx, j.ID, skiplock.FailParams{WorkerID: j.WorkerID, Attempt: j.Attempt,
					ErrorType: "Boom", Message: "disk full\nline 2"}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			done = append(done, driver.CompleteParams{HeldJob: held,
				Result: json.RawMessage(fmt.Sprintf(`{"ok":true,"n":%d}`, pos[j.ID]))})
		}
		if _, err := c.Driver().JobCompleteMany(ctx, done); err != nil {
			t.Fatal(err)
		}
	}
}

// openDir answers a vault in a new directory.
func openDir(t testing.TB) (*Vault, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "vault")
	v, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return v, dir
}

// queryAll answers every job in v.
func queryAll(t testing.TB, v *Vault) []*skiplock.JobRow {
	t.Helper()
	var out []*skiplock.JobRow
	if err := v.Query(context.Background(), QueryParams{}, func(j *skiplock.JobRow) error {
		out = append(out, j)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// viewJSON answers the API view of j as JSON, for comparing jobs.
func viewJSON(t testing.TB, j *skiplock.JobRow) string {
	t.Helper()
	b, err := json.Marshal(skiplock.NewJobView(j))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
