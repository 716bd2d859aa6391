package skiplock

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The parts of the job view carry the view's own values: an event and a
// workflow's job read as the job view reads, field for field.
func TestViewPartsCarryTheViewsValues(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	row := &JobRow{ID: 7, Kind: "k", Queue: "q", Tenant: "t", State: StateRunning, Attempt: 2, MaxRetries: 3,
		Progress: 40, ProgressMessage: "half", WorkflowID: "wf", Stage: "s1", DependsOn: []int64{5},
		CreatedAt: start, StartedAt: &start, UpdatedAt: start.Add(time.Second),
		Errors: []AttemptError{{Attempt: 1, Message: "first"}, {Attempt: 1, Message: "last"}}}
	var view map[string]any
	decode(t, NewJobView(row), &view)
	var event, wf map[string]any
	decode(t, NewJobEvent(row), &event)
	decode(t, workflowJob(row), &wf)
	for name, part := range map[string]map[string]any{"event": event, "workflow job": wf} {
		for k, v := range part {
			if k == "last_error" {
				continue
			}
			if got, want := jsonText(t, v), jsonText(t, view[k]); got != want {
				t.Errorf("%s: %s is %s, the job view's %s", name, k, got, want)
			}
		}
	}
	if len(event) != 11 || event["workflow_id"] != "wf" || event["updated_at"] != "2026-01-02T03:04:06Z" {
		t.Errorf("event: %v", event)
	}
	if wf["last_error"] != "last" || len(wf["depends_on"].([]any)) != 1 {
		t.Errorf("workflow job: %v", wf)
	}
	if NewJobEvent(&JobRow{}).WorkflowID != nil {
		t.Error("a job without workflow has a workflow_id in its event")
	}
}

// A part naming a field the job view lacks, or typing it otherwise, stops
// the package at load.
func TestViewPartRefusesAForeignField(t *testing.T) {
	type stray struct {
		ID    int64  `json:"id"`
		Owner string `json:"owner"`
	}
	type retyped struct {
		ID string `json:"id"`
	}
	for name, f := range map[string]func(){"stray": func() { newViewPart[stray]() },
		"retyped": func() { newViewPart[retyped]() }} {
		func() {
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, "is not JobView's field") {
					t.Errorf("%s: panic %q", name, r)
				}
			}()
			f()
		}()
	}
}

func decode(t *testing.T, v any, out any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
