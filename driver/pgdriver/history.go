package pgdriver

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

var (
	historyAdd         = bind[historyAddArgs]("HistoryAdd")
	historySampleDepth = bind[minuteArg]("HistorySampleDepth")
	historyReadCounts  = bind[historyReadArgs]("HistoryReadCounts")
	historyReadTiming  = bind[historyReadArgs]("HistoryReadTiming")
	historyReadDepth   = bind[historyReadArgs]("HistoryReadDepth")
	historyPrune       = bind[beforeArg]("HistoryPrune")
)

type (
	historyAddArgs struct {
		Minutes  []time.Time `sql:"minutes"`
		Queues   []string    `sql:"queues"`
		Kinds    []string    `sql:"kinds"`
		Outcomes []string    `sql:"outcomes"`
		Ns       []int64     `sql:"ns"`
		Waits    []string    `sql:"waits"`
		Runs     []string    `sql:"runs"`
	}
	minuteArg struct {
		Minute time.Time `sql:"minute"`
	}
	historyReadArgs struct {
		Since  time.Time `sql:"since"`
		Until  time.Time `sql:"until"`
		Bucket float64   `sql:"bucket"`
		Queue  string    `sql:"queue"`
		Kind   string    `sql:"kind"`
	}
	beforeArg struct {
		Before time.Time `sql:"before"`
	}
)

// HistoryAdd adds every count in one statement.
func (e executor) HistoryAdd(ctx context.Context, counts []driver.HistoryCount) error {
	if len(counts) == 0 {
		return nil
	}
	var a historyAddArgs
	for _, c := range counts {
		a.Minutes = append(a.Minutes, c.Minute)
		a.Queues = append(a.Queues, c.Queue)
		a.Kinds = append(a.Kinds, c.Kind)
		a.Outcomes = append(a.Outcomes, c.Outcome)
		a.Ns = append(a.Ns, c.N)
		a.Waits = append(a.Waits, arrayLiteral(c.Wait))
		a.Runs = append(a.Runs, arrayLiteral(c.Run))
	}
	_, err := e.q.Exec(ctx, historyAdd.SQL, historyAdd.Args(a)...)
	return err
}

// arrayLiteral writes a histogram as an array literal, {0,3,1,…}.
func arrayLiteral(h []int64) string {
	var sb strings.Builder
	sb.WriteByte('{')
	for i := range driver.HistoryBuckets {
		if i > 0 {
			sb.WriteByte(',')
		}
		var n int64
		if i < len(h) {
			n = h[i]
		}
		sb.WriteString(strconv.FormatInt(n, 10))
	}
	sb.WriteByte('}')
	return sb.String()
}

func (e executor) HistorySampleDepth(ctx context.Context, minute time.Time) error {
	_, err := e.q.Exec(ctx, historySampleDepth.SQL, historySampleDepth.Args(minuteArg{minute})...)
	return err
}

// HistoryRead sends its three statements as one pipeline.
func (e executor) HistoryRead(ctx context.Context, p driver.HistoryParams) (*driver.History, error) {
	args := historyReadArgs{Since: p.Since, Until: p.Until, Bucket: p.Bucket.Seconds(), Queue: p.Queue, Kind: p.Kind}
	h := &driver.History{}
	b := &pgx.Batch{}
	b.Queue(historyReadCounts.SQL, historyReadCounts.Args(args)...).Query(func(rows pgx.Rows) error {
		var err error
		h.Counts, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.HistoryOutcomeCount, error) {
			var c driver.HistoryOutcomeCount
			return c, r.Scan(&c.Bucket, &c.Outcome, &c.N)
		})
		return err
	})
	b.Queue(historyReadTiming.SQL, historyReadTiming.Args(args)...).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var bucket, i int
			var w, r int64
			if err := rows.Scan(&bucket, &i, &w, &r); err != nil {
				return err
			}
			h.AddTiming(bucket, i-1, w, r)
		}
		return rows.Err()
	})
	b.Queue(historyReadDepth.SQL, historyReadDepth.Args(args)...).Query(func(rows pgx.Rows) error {
		var err error
		h.Depth, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.HistoryDepthPeak, error) {
			var d driver.HistoryDepthPeak
			return d, r.Scan(&d.Bucket, &d.Pending, &d.Scheduled, &d.Running)
		})
		return err
	})
	if err := e.q.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return h, nil
}

func (e executor) HistoryPrune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := e.q.QueryRow(ctx, historyPrune.SQL, historyPrune.Args(beforeArg{before})...).Scan(&n)
	return n, err
}
