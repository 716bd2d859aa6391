package skiplock

import (
	"context"
	"time"

	"github.com/skiplock/skiplock/driver"
)

// HistoryRanges are the spans History reads, each with the width of its
// buckets: 1h in minutes, 24h in quarters of an hour, 7d in hours.
var HistoryRanges = []struct {
	Name   string
	Span   time.Duration
	Bucket time.Duration
}{{"1h", time.Hour, time.Minute}, {"24h", 24 * time.Hour, 15 * time.Minute}, {"7d", 7 * 24 * time.Hour, time.Hour}}

// HistoryParams choose the history read: a Range of HistoryRanges ("1h"
// when empty), and one Queue and/or Kind ("" for all).
type HistoryParams struct {
	Range string
	Queue string
	Kind  string
}

// History is the attempts that ended and the queue depth over a range, in
// buckets, oldest first, every bucket present. It is read from the history
// table (docs/dashboard.md): counts written as attempts end, never
// recomputed, so that retrying a job later does not change them.
type History struct {
	Range         string         `json:"range"`
	Queue         string         `json:"queue"`
	Kind          string         `json:"kind"`
	Since         time.Time      `json:"since"`
	BucketSeconds int            `json:"bucket_seconds"`
	Series        []HistoryPoint `json:"series"`
}

// HistoryPoint is one bucket of the history. Attempts count by outcome;
// FailureRate is the share of the attempts (snoozes aside) that failed,
// retried or not, nil without attempts. Pending, Scheduled and Running
// are the largest depth sampled in the bucket. The waits (run_at to start)
// and run times are quantiles in seconds, within 19% (docs/dashboard.md),
// nil without timed attempts.
type HistoryPoint struct {
	Start       time.Time `json:"start"`
	Completed   int64     `json:"completed"`
	Retried     int64     `json:"retried"`
	Failed      int64     `json:"failed"`
	Cancelled   int64     `json:"cancelled"`
	Snoozed     int64     `json:"snoozed"`
	FailureRate *float64  `json:"failure_rate"`
	Pending     int64     `json:"pending"`
	Scheduled   int64     `json:"scheduled"`
	Running     int64     `json:"running"`
	WaitP50     *float64  `json:"wait_p50_seconds"`
	WaitP95     *float64  `json:"wait_p95_seconds"`
	RunP50      *float64  `json:"run_p50_seconds"`
	RunP95      *float64  `json:"run_p95_seconds"`
}

// History reads the history of p.Range up to now.
func (c *Client) History(ctx context.Context, p HistoryParams) (*History, error) {
	if p.Range == "" {
		p.Range = "1h"
	}
	span, bucket := time.Duration(0), time.Duration(0)
	for _, r := range HistoryRanges {
		if r.Name == p.Range {
			span, bucket = r.Span, r.Bucket
		}
	}
	if span == 0 {
		return nil, invalid("range", "must be 1h, 24h or 7d, got %q", p.Range)
	}
	st, err := driver.As[driver.HistoryStore](c.driver)
	if err != nil {
		return nil, err
	}
	n := int(span / bucket)
	since := time.Now().UTC().Truncate(bucket).Add(bucket - span)
	got, err := st.HistoryRead(ctx, driver.HistoryParams{Since: since, Until: since.Add(span), Bucket: bucket,
		Queue: p.Queue, Kind: p.Kind})
	if err != nil {
		return nil, err
	}
	h := &History{Range: p.Range, Queue: p.Queue, Kind: p.Kind, Since: since, BucketSeconds: int(bucket.Seconds()),
		Series: make([]HistoryPoint, n)}
	for i := range h.Series {
		h.Series[i].Start = since.Add(time.Duration(i) * bucket)
	}
	h.fill(got)
	return h, nil
}

// fill adds what the driver read to the series.
func (h *History) fill(got *driver.History) {
	at := func(b int) *HistoryPoint {
		if b < 0 || b >= len(h.Series) {
			return nil
		}
		return &h.Series[b]
	}
	for _, c := range got.Counts {
		if pt := at(c.Bucket); pt != nil {
			switch c.Outcome {
			case driver.HistoryCompleted:
				pt.Completed += c.N
			case driver.HistoryRetried:
				pt.Retried += c.N
			case driver.HistoryFailed:
				pt.Failed += c.N
			case driver.HistoryCancelled:
				pt.Cancelled += c.N
			case driver.HistorySnoozed:
				pt.Snoozed += c.N
			}
		}
	}
	for _, d := range got.Depth {
		if pt := at(d.Bucket); pt != nil {
			pt.Pending, pt.Scheduled, pt.Running = d.Pending, d.Scheduled, d.Running
		}
	}
	for _, t := range got.Timing {
		if pt := at(t.Bucket); pt != nil {
			pt.WaitP50, pt.WaitP95 = quantile(t.Wait, 0.5), quantile(t.Wait, 0.95)
			pt.RunP50, pt.RunP95 = quantile(t.Run, 0.5), quantile(t.Run, 0.95)
		}
	}
	for i := range h.Series {
		pt := &h.Series[i]
		if all := pt.Completed + pt.Retried + pt.Failed + pt.Cancelled; all > 0 {
			rate := float64(pt.Retried+pt.Failed) / float64(all)
			pt.FailureRate = &rate
		}
	}
}

// Totals adds up the attempts of the series by outcome.
func (h *History) Totals() HistoryPoint {
	var t HistoryPoint
	for _, pt := range h.Series {
		t.Completed += pt.Completed
		t.Retried += pt.Retried
		t.Failed += pt.Failed
		t.Cancelled += pt.Cancelled
		t.Snoozed += pt.Snoozed
	}
	if all := t.Completed + t.Retried + t.Failed + t.Cancelled; all > 0 {
		rate := float64(t.Retried+t.Failed) / float64(all)
		t.FailureRate = &rate
	}
	return t
}

// quantile answers the q quantile of a histogram in seconds: the middle
// of the bucket it falls in; nil for an empty histogram.
func quantile(hist []int64, q float64) *float64 {
	var total int64
	for _, n := range hist {
		total += n
	}
	if total == 0 {
		return nil
	}
	rank := int64(q*float64(total) + 0.999999)
	var seen int64
	for i, n := range hist {
		seen += n
		if seen >= max(rank, 1) {
			s := driver.HistoryBucketMiddle(i).Seconds()
			return &s
		}
	}
	return nil
}
