package bench

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// commitTable is the table of --mode commit: beside Skiplock's, in the
// bench's schema or file, and dropped after the run.
const commitTable = "skiplock_bench_commit"

// Commit measures the database's own floor under the latency figures: a
// bare one-row INSERT into a table of the bench's own, each its own
// transaction committed as the database commits by default (on
// PostgreSQL: flushed to disk before it answers), at perSec one at a time
// for d. Nothing of Skiplock runs; its insert is such a commit and more.
// The percentiles are of the insert calls.
func (h *Harness) Commit(ctx context.Context, insert func(ctx context.Context, payload string) error, perSec float64, d time.Duration) (Result, error) {
	calls := make([]time.Duration, 0, int(perSec*d.Seconds())+1)
	start := time.Now()
	stopProgress := h.show(func() string {
		return fmt.Sprintf("commit %s/%s inserted %d", time.Since(start).Truncate(time.Second), d, len(calls))
	})
	defer stopProgress()
	err := paced(ctx, start, perSec, d, func(time.Time) error {
		called := time.Now()
		// The payload of a bench job: its enqueue time.
		if err := insert(ctx, `{"t":`+strconv.FormatInt(called.UnixNano(), 10)+`}`); err != nil {
			return fmt.Errorf("insert into %s: %w", commitTable, err)
		}
		calls = append(calls, time.Since(called))
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	n := int64(len(calls))
	slices.Sort(calls)
	return Result{Mode: "commit", Jobs: n, Elapsed: d, JobsPerSec: rate(n, d),
		P50: percentile(calls, 0.50), P95: percentile(calls, 0.95), P99: percentile(calls, 0.99)}, nil
}

// CommitTable makes the table of --mode commit and answers a one-row
// insert into it, on the bench's connection to its schema (PostgreSQL) or
// on the connection Skiplock writes through (SQLite), and how to drop it.
func (d *Database) CommitTable(ctx context.Context) (insert func(ctx context.Context, payload string) error, drop func(), err error) {
	if d.Admin != nil {
		if _, err := d.Admin.Exec(ctx, "CREATE TABLE "+commitTable+" (id bigserial PRIMARY KEY, payload jsonb NOT NULL)"); err != nil {
			return nil, nil, fmt.Errorf("create %s: %w", commitTable, err)
		}
		insert = func(ctx context.Context, payload string) error {
			_, err := d.Admin.Exec(ctx, "INSERT INTO "+commitTable+" (payload) VALUES ($1)", payload)
			return err
		}
		drop = func() { _, _ = d.Admin.Exec(context.Background(), "DROP TABLE IF EXISTS "+commitTable) }
		return insert, drop, nil
	}
	sq, ok := d.Driver.(interface{ DB() *sql.DB })
	if !ok {
		return nil, nil, fmt.Errorf("--mode commit: the %s driver has no connection of its own to insert through", d.Kind)
	}
	db := sq.DB()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+commitTable+" (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)"); err != nil {
		return nil, nil, fmt.Errorf("create %s: %w", commitTable, err)
	}
	insert = func(ctx context.Context, payload string) error {
		_, err := db.ExecContext(ctx, "INSERT INTO "+commitTable+" (payload) VALUES (?)", payload)
		return err
	}
	drop = func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+commitTable) }
	return insert, drop, nil
}
