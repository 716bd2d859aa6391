package vault

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/skiplock/skiplock"
)

// Parts answers the parts the vault holds, by hour then first id; with
// from or to set, only the hours that overlap [from, to).
func (v *Vault) Parts(ctx context.Context, from, to time.Time) ([]*Part, error) {
	v.mu.Lock()
	m, err := v.settled(ctx)
	v.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return m.sortedParts(from, to), nil
}

// sortedParts answers the parts of the hours that overlap [from, to), by
// hour then first id.
func (m *manifest) sortedParts(from, to time.Time) []*Part {
	var out []*Part
	for _, p := range m.Parts {
		if inHours(p.Hour, from, to) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *Part) int {
		return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.MinID(), b.MinID()))
	})
	return out
}

// inHours answers whether the hour starting at h overlaps [from, to); a
// zero bound is open.
func inHours(h, from, to time.Time) bool {
	return (from.IsZero() || h.Add(time.Hour).After(from)) && (to.IsZero() || h.Before(to))
}

// QueryParams picks jobs from the vault: every field set must match.
type QueryParams struct {
	// From and To bound the finish time: From ≤ finished_at < To.
	From, To time.Time
	States   []skiplock.JobState
	Kind     string
	Queue    string
	Tenant   *string
	// Limit stops after this many jobs; 0 is no limit.
	Limit int
}

func (q *QueryParams) match(j *skiplock.JobRow) bool {
	f := *j.FinishedAt
	return (q.From.IsZero() || !f.Before(q.From)) && (q.To.IsZero() || f.Before(q.To)) &&
		(len(q.States) == 0 || slices.Contains(q.States, j.State)) &&
		(q.Kind == "" || j.Kind == q.Kind) && (q.Queue == "" || j.Queue == q.Queue) &&
		(q.Tenant == nil || j.Tenant == *q.Tenant)
}

// errStop ends a query early.
var errStop = errors.New("stop")

// Query calls fn with each job of the vault that q picks, by hour of
// finish then id, until fn returns an error (answered) or Limit is met.
// Of a job stored in several versions (retried after it was stored), only
// the latest is answered, and only when q picks it.
func (v *Vault) Query(ctx context.Context, q QueryParams, fn func(*skiplock.JobRow) error) error {
	if q.Limit < 0 {
		return fmt.Errorf("limit: must not be negative, got %d", q.Limit)
	}
	v.mu.Lock()
	m, err := v.settled(ctx)
	v.mu.Unlock()
	if err != nil {
		return err
	}
	latest, err := v.latest(ctx, m)
	if err != nil {
		return err
	}
	n := 0
	for _, p := range m.sortedParts(q.From, q.To) {
		err := readParquet(ctx, v.b, p.Jobs, func(r *jobRecord) error {
			j, err := r.job()
			if err != nil {
				return err
			}
			if j.FinishedAt == nil || !q.match(j) {
				return nil
			}
			if at, ok := latest[j.ID]; ok && at != versionOf(j) {
				return nil // an earlier version
			}
			if err := fn(j); err != nil {
				return err
			}
			n++
			if q.Limit > 0 && n >= q.Limit {
				return errStop
			}
			return nil
		})
		if errors.Is(err, errStop) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readBatch is how many rows a read decodes at a time.
const readBatch = 1024

// readParquet calls fn with each row of the Parquet file at key.
func readParquet[T any](ctx context.Context, b backend, key string, fn func(*T) error) (err error) {
	obj, size, err := b.open(ctx, key)
	if err != nil {
		return fmt.Errorf("vault: open %s: %w", key, err)
	}
	defer obj.Close()
	defer func() {
		// parquet-go panics on some malformed files; a damaged file is an
		// error naming it, never a crash.
		if p := recover(); p != nil {
			err = fmt.Errorf("vault: read %s: %v", key, p)
		}
	}()
	f, err := parquet.OpenFile(obj, size)
	if err != nil {
		return fmt.Errorf("vault: read %s: %w", key, err)
	}
	buf := make([]T, readBatch)
	for _, rg := range f.RowGroups() {
		r := parquet.NewGenericRowGroupReader[T](rg)
		for {
			n, rerr := r.Read(buf)
			for i := range n {
				if err := fn(&buf[i]); err != nil {
					r.Close()
					return err
				}
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				r.Close()
				return fmt.Errorf("vault: read %s: %w", key, rerr)
			}
		}
		if err := r.Close(); err != nil {
			return fmt.Errorf("vault: read %s: %w", key, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// HourMetrics is a queue's jobs finished in one hour, summed over the
// hour's parts.
type HourMetrics struct {
	Hour                               time.Time
	Queue                              string
	Jobs, Completed, Failed, Cancelled int64
	Runs                               int64
	RunMeanMs                          float64
	// RunP95Ms is the largest p95 of the hour's parts (exact when the
	// hour has one part).
	RunP95Ms float64
}

// Metrics answers the hourly queue metrics of the hours that overlap
// [from, to), by hour then queue.
func (v *Vault) Metrics(ctx context.Context, from, to time.Time) ([]HourMetrics, error) {
	parts, err := v.Parts(ctx, from, to)
	if err != nil {
		return nil, err
	}
	type key struct {
		hour  time.Time
		queue string
	}
	sums := map[key]*HourMetrics{}
	totals := map[key]float64{}
	for _, p := range parts {
		err := readParquet(ctx, v.b, p.Metrics, func(r *metricsRecord) error {
			k := key{r.Hour.UTC(), r.Queue}
			s := sums[k]
			if s == nil {
				s = &HourMetrics{Hour: k.hour, Queue: r.Queue}
				sums[k] = s
			}
			s.Jobs += r.Jobs
			s.Completed += r.Completed
			s.Failed += r.Failed
			s.Cancelled += r.Cancelled
			s.Runs += r.Runs
			totals[k] += r.RunTotalMs
			s.RunP95Ms = max(s.RunP95Ms, r.RunP95Ms)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]HourMetrics, 0, len(sums))
	for k, s := range sums {
		if s.Runs > 0 {
			s.RunMeanMs = totals[k] / float64(s.Runs)
		}
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b HourMetrics) int {
		return cmp.Or(a.Hour.Compare(b.Hour), cmp.Compare(a.Queue, b.Queue))
	})
	return out, nil
}
