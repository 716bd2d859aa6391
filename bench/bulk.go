package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
)

// bulkQueue holds the jobs --bulk seeds; no worker of the bench takes them.
const bulkQueue = "bench_bulk"

// SeedBulk inserts n pending jobs in bulkQueue, for bulk actions to act on.
func SeedBulk(ctx context.Context, c *skiplock.Client, n int) error {
	const batch = 5000
	for done := 0; done < n; done += batch {
		jobs := make([]skiplock.InsertManyParams, min(batch, n-done))
		for i := range jobs {
			jobs[i] = skiplock.InsertManyParams{Args: skiplock.RawArgs{KindName: "bench_bulk"},
				Opts: &skiplock.InsertOpts{Queue: bulkQueue}}
		}
		if _, err := c.InsertMany(ctx, jobs); err != nil {
			return fmt.Errorf("seed bulk jobs: %w", err)
		}
	}
	return nil
}

// bulkActions pauses, resumes, cancels, retries, cancels again and deletes
// the seeded jobs with JobsBulk, one action after the other, and answers
// each action's jobs and seconds.
func bulkActions(c *skiplock.Client, batch int) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		filter := skiplock.BulkFilter{Queues: []string{bulkQueue}}
		var figures []string
		for _, a := range []skiplock.BulkAction{skiplock.BulkPause, skiplock.BulkResume, skiplock.BulkCancel,
			skiplock.BulkRetry, skiplock.BulkCancel, skiplock.BulkDelete} {
			start := time.Now()
			res, err := c.JobsBulk(ctx, skiplock.BulkParams{Action: a, Filter: filter, BatchSize: batch})
			if err != nil {
				return "", fmt.Errorf("bulk %s: %w", a, err)
			}
			secs := time.Since(start).Seconds()
			figures = append(figures, fmt.Sprintf("bulk_%s_jobs=%d bulk_%s_seconds=%.2f", a, res.Done, a, secs))
		}
		return strings.Join(figures, " "), nil
	}
}
