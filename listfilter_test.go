package skiplock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestJobListFiltersRefuseBadInput: a filter JobList cannot answer is a
// *ValidationError naming its field, and a good one lists.
func TestJobListFiltersRefuseBadInput(t *testing.T) {
	t.Parallel()
	client, err := skiplock.NewClient(sqlitetest.New(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := client.Insert(ctx, sleepArgs{}, &skiplock.InsertOpts{Tags: []string{"vip"}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for field, p := range map[string]skiplock.JobListParams{
		"tags":            {Tags: []string{"vip", ""}},
		"metadata":        {Metadata: map[string]any{`a"b`: 1}},
		"created_before":  {CreatedAfter: now, CreatedBefore: now.Add(-time.Hour)},
		"finished_before": {FinishedAfter: now, FinishedBefore: now},
		"idempotency_key": {IdempotencyKey: "a\x00b"},
		"error_type":      {ErrorType: "\xff"},
		"error_message":   {ErrorMessage: "a\x00b"},
		"payload":         {Payload: map[string]any{"order.": 1}},
	} {
		var ve *skiplock.ValidationError
		if _, err := client.JobList(ctx, p); !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%+v: %v, want a ValidationError on %s", p, err, field)
		}
	}
	for _, bad := range []map[string]any{{"": 1}, {`a"b`: 1}, {".a": 1}, {"a..b": 1}, {"a": 1, "a.b": 2}} {
		var ve *skiplock.ValidationError
		if _, err := client.JobList(ctx, skiplock.JobListParams{Payload: bad}); !errors.As(err, &ve) || ve.Field != "payload" {
			t.Errorf("payload %v: %v, want a ValidationError on payload", bad, err)
		}
	}
	jobs, err := client.JobList(ctx, skiplock.JobListParams{Tags: []string{"vip"}, CreatedBefore: now.Add(time.Minute)})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("list by tag: %d jobs, %v", len(jobs), err)
	}
}
