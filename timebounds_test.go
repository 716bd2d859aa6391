package skiplock_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
)

// TestTimeBounds: the client refuses, before storing anything, a time a
// job or schedule could not be rendered with (outside 1970–9999 in UTC),
// naming the field; the edges of the range are taken.
func TestTimeBounds(t *testing.T) {
	forEachDriver(t, func(t *testing.T, b *wfBundle) {
		c, err := skiplock.NewClient(b.drv, &skiplock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		west := time.FixedZone("west", -3600)
		tooLate := time.Date(9999, 12, 31, 23, 59, 59, 0, west) // year 10000 in UTC
		tooEarly := time.Date(1970, 1, 1, 0, 30, 0, 0, time.FixedZone("east", 3600))
		args := skiplock.RawArgs{KindName: "x", Payload: json.RawMessage(`{}`)}
		wantField := func(what string, err error, field string) {
			t.Helper()
			var ve *skiplock.ValidationError
			if !errors.As(err, &ve) || ve.Field != field {
				t.Errorf("%s: %v; want a ValidationError naming %s", what, err, field)
			}
		}
		_, err = c.Insert(b.ctx, args, &skiplock.InsertOpts{RunAt: tooLate})
		wantField("Insert RunAt year 10000", err, "run_at")
		_, err = c.Insert(b.ctx, args, &skiplock.InsertOpts{RunAt: tooEarly})
		wantField("Insert RunAt 1969", err, "run_at")
		_, err = c.Insert(b.ctx, args, &skiplock.InsertOpts{RunAt: time.Now().Add(time.Hour), Delay: time.Minute})
		wantField("Insert RunAt and Delay", err, "delay")
		_, err = c.InsertMany(b.ctx, []skiplock.InsertManyParams{{Args: args}, {Args: args, Opts: &skiplock.InsertOpts{RunAt: tooLate}}})
		wantField("InsertMany", err, "run_at")
		_, err = c.InsertBatch(b.ctx, []skiplock.InsertManyParams{{Args: args}, {Args: args, Opts: &skiplock.InsertOpts{RunAt: tooLate}}})
		wantField("InsertBatch", err, "jobs[1].run_at")
		_, err = c.ScheduleUpsert(b.ctx, &skiplock.Schedule{Key: "k", Kind: "x", Every: time.Minute, NextRunAt: tooLate})
		wantField("ScheduleUpsert", err, "next_run_at")
		if jobs, err := c.JobList(b.ctx, skiplock.JobListParams{Limit: 10}); err != nil || len(jobs) != 0 {
			t.Errorf("refused inserts stored %d jobs (%v)", len(jobs), err)
		}
		if list, err := c.ScheduleList(b.ctx, nil); err != nil || len(list) != 0 {
			t.Errorf("refused upsert stored %d schedules (%v)", len(list), err)
		}
		last := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
		for _, at := range []time.Time{time.Unix(0, 0), last} {
			res, err := c.Insert(b.ctx, args, &skiplock.InsertOpts{RunAt: at})
			if err != nil {
				t.Fatalf("Insert RunAt %s: %v", at, err)
			}
			if _, err := json.Marshal(skiplock.NewJobView(res.Job)); err != nil {
				t.Errorf("job with RunAt %s does not render: %v", at, err)
			}
		}
		if _, err := c.ScheduleUpsert(b.ctx, &skiplock.Schedule{Key: "k", Kind: "x", Every: time.Minute, NextRunAt: last}); err != nil {
			t.Errorf("ScheduleUpsert at the last instant: %v", err)
		}
	})
}

// TestViewTimeRendersAnyTime: a job whose times lie outside what JSON
// writes (a row written by other means) still renders, held at the edge.
func TestViewTimeRendersAnyTime(t *testing.T) {
	t.Parallel()
	far := time.Date(294276, 1, 1, 0, 0, 0, 0, time.UTC)
	past := time.Date(-4713, 1, 1, 0, 0, 0, 0, time.UTC)
	row := &skiplock.JobRow{ID: 1, Kind: "x", RunAt: far, CreatedAt: past, UpdatedAt: far, LeaseUntil: &far,
		Errors: []skiplock.AttemptError{{Attempt: 1, At: far}}}
	b, err := json.Marshal(skiplock.NewJobView(row))
	if err != nil {
		t.Fatalf("view of a far job: %v", err)
	}
	var v struct {
		RunAt string `json:"run_at"`
	}
	_ = json.Unmarshal(b, &v)
	if v.RunAt != "9999-12-31T23:59:59.999999999Z" {
		t.Errorf("run_at of year 294276 renders %q", v.RunAt)
	}
	if !row.Errors[0].At.Equal(far) {
		t.Error("the view changed the row's errors")
	}
	if _, err := json.Marshal(skiplock.NewWorkflowView("wf", []*skiplock.JobRow{row})); err != nil {
		t.Errorf("workflow view of a far job: %v", err)
	}
}
