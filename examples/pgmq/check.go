package main

import (
	"context"
	"fmt"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/examples/internal/example"
)

// check prints what happened to the crashed and the poisoned message and
// what the archive holds, and answers an error if it is not what the original
// describes.
func check(ctx context.Context, c *skiplock.Client, crashed, poison int64) error {
	j, err := c.JobGet(ctx, crashed)
	if err != nil {
		return err
	}
	example.Say("job %d (the crashed read): %s after %d reads; errors: %s", j.ID, j.State, j.Attempt, errorList(j))
	if j.State != skiplock.StateCompleted || j.Attempt != 2 || len(j.Errors) == 0 || j.Errors[0].Type != "lease_expired" {
		return fmt.Errorf("crashed message: want completed on read 2 after lease_expired, got %s on read %d", j.State, j.Attempt)
	}
	example.Say("visibility timeout expired -> message reappeared -> retried: ok")

	p, err := c.JobGet(ctx, poison)
	if err != nil {
		return err
	}
	example.Say("job %d (the poison pill): %s after %d reads; errors: %s", p.ID, p.State, p.Attempt, errorList(p))
	if p.State != skiplock.StateFailed || p.Attempt != 3 {
		return fmt.Errorf("poison pill: want failed after 3 reads, got %s after %d", p.State, p.Attempt)
	}
	example.Say("poison pill protection: failed for good after 3 reads (dead letter): ok")

	live, err := c.QueueList(ctx, false)
	if err != nil {
		return err
	}
	all, err := c.QueueList(ctx, true)
	if err != nil {
		return err
	}
	hotByQueue := map[string]int64{}
	for _, q := range live {
		for _, n := range q.Counts {
			hotByQueue[q.Name] += n
		}
	}
	for _, q := range all {
		hot := hotByQueue[q.Name]
		example.Say("queue %s: %d live in the hot table; archive: %d completed, %d failed",
			q.Name, hot, q.Counts[skiplock.StateCompleted], q.Counts[skiplock.StateFailed])
		if hot != 0 {
			return fmt.Errorf("queue %s: %d jobs still live", q.Name, hot)
		}
	}
	done, err := c.JobList(ctx, skiplock.JobListParams{States: []skiplock.JobState{skiplock.StateCompleted}, Limit: 100})
	if err != nil {
		return err
	}
	example.Say("archive: %d completed jobs (the original's a_scrape_jobs + a_enrich_jobs)", len(done))
	if len(done) != 6 {
		return fmt.Errorf("archive: want 6 completed jobs (3 scrape + 3 enrich), got %d", len(done))
	}
	return nil
}

func errorList(j *skiplock.JobRow) string {
	s := ""
	for i, e := range j.Errors {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("read %d: %s", e.Attempt, e.Message)
	}
	if s == "" {
		return "none"
	}
	return s
}
