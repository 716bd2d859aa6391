package sqlitedriver

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// historyRow is a count as HistoryAdd's @rows holds it.
type historyRow struct {
	Minute  int64   `json:"m"`
	Queue   string  `json:"q"`
	Kind    string  `json:"k"`
	Outcome string  `json:"o"`
	N       int64   `json:"n"`
	Wait    []int64 `json:"w"`
	Run     []int64 `json:"r"`
}

// HistoryAdd adds every count in one statement of the writer.
func (e executor) HistoryAdd(ctx context.Context, counts []driver.HistoryCount) error {
	if len(counts) == 0 {
		return nil
	}
	rows := make([]historyRow, len(counts))
	for i, c := range counts {
		rows[i] = historyRow{Minute: c.Minute.UnixMicro(), Queue: c.Queue, Kind: c.Kind, Outcome: c.Outcome, N: c.N,
			Wait: fullHistogram(c.Wait), Run: fullHistogram(c.Run)}
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = e.wexec(ctx, "HistoryAdd", sql.Named("rows", string(data)))
	return err
}

// fullHistogram answers h HistoryBuckets long: stored histograms add up
// key by key.
func fullHistogram(h []int64) []int64 {
	out := make([]int64, driver.HistoryBuckets)
	copy(out, h)
	return out
}

func (e executor) HistorySampleDepth(ctx context.Context, minute time.Time) error {
	_, err := e.wexec(ctx, "HistorySampleDepth", sql.Named("minute", minute.UnixMicro()))
	return err
}

func (e executor) HistoryRead(ctx context.Context, p driver.HistoryParams) (*driver.History, error) {
	args := []any{sql.Named("since", p.Since.UnixMicro()), sql.Named("until", p.Until.UnixMicro()),
		sql.Named("bucket", p.Bucket.Microseconds()), sql.Named("queue", p.Queue), sql.Named("kind", p.Kind)}
	h := &driver.History{}
	var err error
	h.Counts, err = collect(func(s scanner) (driver.HistoryOutcomeCount, error) {
		var c driver.HistoryOutcomeCount
		return c, s.Scan(&c.Bucket, &c.Outcome, &c.N)
	})(e.rquery(ctx, "HistoryReadCounts", args...))
	if err != nil {
		return nil, err
	}
	_, err = collect(func(s scanner) (struct{}, error) {
		var bucket, i int
		var w, r int64
		if err := s.Scan(&bucket, &i, &w, &r); err != nil {
			return struct{}{}, err
		}
		h.AddTiming(bucket, i, w, r)
		return struct{}{}, nil
	})(e.rquery(ctx, "HistoryReadTiming", args...))
	if err != nil {
		return nil, err
	}
	h.Depth, err = collect(func(s scanner) (driver.HistoryDepthPeak, error) {
		var d driver.HistoryDepthPeak
		return d, s.Scan(&d.Bucket, &d.Pending, &d.Scheduled, &d.Running)
	})(e.rquery(ctx, "HistoryReadDepth", args...))
	if err != nil {
		return nil, err
	}
	return h, nil
}

func (e executor) HistoryPrune(ctx context.Context, before time.Time) (int64, error) {
	var total int64
	for _, name := range []string{"HistoryPrune", "HistoryPruneDepth"} {
		res, err := e.wexec(ctx, name, sql.Named("before", before.UnixMicro()))
		if err != nil {
			return total, err
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
