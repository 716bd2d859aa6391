package skiplock

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// WorkflowStatus is the overall status of a workflow.
type WorkflowStatus string

// The statuses of a workflow: running while any job is live; once every job
// finished, failed if one failed, else cancelled if one was cancelled, else
// completed.
const (
	WorkflowRunning   WorkflowStatus = "running"
	WorkflowCompleted WorkflowStatus = "completed"
	WorkflowFailed    WorkflowStatus = "failed"
	WorkflowCancelled WorkflowStatus = "cancelled"
)

// WorkflowView is the jobs sharing a workflow_id, grouped by stage in the
// order the stages started, with an overall status.
type WorkflowView struct {
	ID     string         `json:"id"`
	Status WorkflowStatus `json:"status"`
	// CurrentStage is the first stage not completed ("" when all are): the
	// seeds' pending → scraping → enriching → done.
	CurrentStage string           `json:"current_stage"`
	Stages       []WorkflowStage  `json:"stages"`
	Counts       map[JobState]int `json:"counts"`
	CreatedAt    time.Time        `json:"created_at"`
	UpdatedAt    time.Time        `json:"updated_at"`
	FinishedAt   *time.Time       `json:"finished_at"`
}

// WorkflowStage is the jobs of one stage (InsertOpts.Stage, or the kind
// when a job has no stage).
type WorkflowStage struct {
	Name string `json:"name"`
	// State sums up the stage's jobs: the most active state among them
	// (running, pending, scheduled, paused, waiting), or once all finished
	// failed, cancelled or completed.
	State JobState `json:"state"`
	// Progress is the mean progress of the stage's jobs (0–100).
	Progress int           `json:"progress"`
	Jobs     []WorkflowJob `json:"jobs"`
}

// WorkflowJob is one job of a workflow view: part of its JobView, and the
// message of its last attempt error.
type WorkflowJob struct {
	ID              int64      `json:"id"`
	Kind            string     `json:"kind"`
	Queue           string     `json:"queue"`
	Tenant          string     `json:"tenant"`
	State           JobState   `json:"state"`
	Attempt         int        `json:"attempt"`
	MaxRetries      int        `json:"max_retries"`
	Progress        int        `json:"progress"`
	ProgressMessage string     `json:"progress_message"`
	DependsOn       []int64    `json:"depends_on"`
	LastError       *string    `json:"last_error" view:"-"`
	CreatedAt       time.Time  `json:"created_at"`
	StartedAt       *time.Time `json:"started_at"`
	FinishedAt      *time.Time `json:"finished_at"`
}

// workflowMaxJobs bounds a workflow view.
const workflowMaxJobs = 100_000

// Workflow answers the view of workflow id, live and archived jobs;
// ErrNotFound when no job carries the id.
func (c *Client) Workflow(ctx context.Context, id string) (*WorkflowView, error) {
	if id == "" {
		return nil, invalid("workflow_id", "must not be empty")
	}
	var jobs []*JobRow
	p := JobListParams{WorkflowID: id, Limit: 1000}
	for len(jobs) < workflowMaxJobs {
		page, err := c.driver.JobList(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("workflow %q: list jobs: %w", id, err)
		}
		jobs = append(jobs, page...)
		if len(page) < p.Limit {
			break
		}
		p.BeforeID = page[len(page)-1].ID
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("workflow %q: %w", id, ErrNotFound)
	}
	return NewWorkflowView(id, jobs), nil
}

// NewWorkflowView builds the view of workflow id from its jobs (in any
// order), e.g. after filtering them by tenant.
func NewWorkflowView(id string, jobs []*JobRow) *WorkflowView {
	sorted := append([]*JobRow(nil), jobs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	v := &WorkflowView{ID: id, Counts: map[JobState]int{}, Stages: []WorkflowStage{}}
	index := map[string]int{}
	for _, j := range sorted {
		name := j.Stage
		if name == "" {
			name = j.Kind
		}
		i, ok := index[name]
		if !ok {
			i = len(v.Stages)
			index[name] = i
			v.Stages = append(v.Stages, WorkflowStage{Name: name})
		}
		v.Stages[i].Jobs = append(v.Stages[i].Jobs, workflowJob(j))
		v.Counts[j.State]++
		if v.CreatedAt.IsZero() || j.CreatedAt.Before(v.CreatedAt) {
			v.CreatedAt = j.CreatedAt
		}
		if j.UpdatedAt.After(v.UpdatedAt) {
			v.UpdatedAt = j.UpdatedAt
		}
	}
	for i := range v.Stages {
		s := &v.Stages[i]
		states, sum := make([]JobState, len(s.Jobs)), 0
		for k, j := range s.Jobs {
			states[k], sum = j.State, sum+j.Progress
		}
		s.State, s.Progress = summarize(states), sum/len(s.Jobs)
		if v.CurrentStage == "" && s.State != StateCompleted {
			v.CurrentStage = s.Name
		}
	}
	v.Status = workflowStatus(v.Counts)
	if v.Status != WorkflowRunning {
		for _, j := range sorted {
			if j.FinishedAt != nil && (v.FinishedAt == nil || j.FinishedAt.After(*v.FinishedAt)) {
				v.FinishedAt = j.FinishedAt
			}
		}
	}
	// Held renderable like a job's (ViewTime).
	v.CreatedAt, v.UpdatedAt, v.FinishedAt = ViewTime(v.CreatedAt), ViewTime(v.UpdatedAt), viewTimePtr(v.FinishedAt)
	return v
}

// stateRank orders states from the most active to the least, for a stage's
// summary.
var stateRank = map[JobState]int{StateRunning: 0, StatePending: 1, StateScheduled: 2, StatePaused: 3,
	StateWaiting: 4, StateFailed: 5, StateCancelled: 6, StateCompleted: 7}

func summarize(states []JobState) JobState {
	best := states[0]
	for _, s := range states[1:] {
		if stateRank[s] < stateRank[best] {
			best = s
		}
	}
	return best
}

func workflowStatus(counts map[JobState]int) WorkflowStatus {
	for s, n := range counts {
		if n > 0 && !s.Finished() {
			return WorkflowRunning
		}
	}
	switch {
	case counts[StateFailed] > 0:
		return WorkflowFailed
	case counts[StateCancelled] > 0:
		return WorkflowCancelled
	}
	return WorkflowCompleted
}

func workflowJob(j *JobRow) WorkflowJob {
	w := workflowJobPart.of(NewJobView(j))
	if n := len(j.Errors); n > 0 {
		w.LastError = &j.Errors[n-1].Message
	}
	return w
}

// afterCompleteWithNext handles a completion with next stages. When it did
// not commit, no next job exists: with the lease lost another worker holds
// the job; otherwise (a next job failed validation, a dependency is
// missing, the database failed) the attempt failed and the job is retried
// like after any error.
func (c *Client) afterCompleteWithNext(run *runningJob, err error) {
	if err == nil || errors.Is(err, ErrLeaseLost) {
		c.logOutcome(run, "completed with next stages", err)
		return
	}
	c.recordFailure(run, fmt.Errorf("insert next stages: %w", err))
}
