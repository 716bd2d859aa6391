package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/skiplock/skiplock"
)

// defaultJanitorRuns is how many runs GET /v1/janitor answers by default.
const defaultJanitorRuns = 20

// JanitorRunView is a janitor run as the API and `skiplock janitor status
// --json` show it.
type JanitorRunView struct {
	ID              int64                       `json:"id"`
	StartedAt       time.Time                   `json:"started_at"`
	FinishedAt      time.Time                   `json:"finished_at"`
	DurationSeconds float64                     `json:"duration_seconds"`
	Runner          string                      `json:"runner"`
	DryRun          bool                        `json:"dry_run"`
	Forced          bool                        `json:"forced"`
	Outcome         string                      `json:"outcome"`
	Message         string                      `json:"message"`
	Jobs            int64                       `json:"jobs"`
	ByState         map[skiplock.JobState]int64 `json:"by_state"`
	Partitions      int                         `json:"partitions"`
	Bytes           int64                       `json:"bytes"`
	Vaulted         int64                       `json:"vaulted"`
}

// NewJanitorRunView answers the view of a run.
func NewJanitorRunView(r *skiplock.JanitorRun) JanitorRunView {
	by := r.ByState
	if by == nil {
		by = map[skiplock.JobState]int64{}
	}
	return JanitorRunView{ID: r.ID, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		DurationSeconds: r.FinishedAt.Sub(r.StartedAt).Seconds(), Runner: r.Runner, DryRun: r.DryRun,
		Forced: r.Forced, Outcome: r.Outcome, Message: r.Message, Jobs: r.Jobs, ByState: by,
		Partitions: r.Partitions, Bytes: r.Bytes, Vaulted: r.Vaulted}
}

// RetentionView is a client's retention; a keep of null keeps for ever.
type RetentionView struct {
	Enabled          bool                `json:"enabled"`
	CompletedSeconds *float64            `json:"completed_seconds"`
	FailedSeconds    *float64            `json:"failed_seconds"`
	CancelledSeconds *float64            `json:"cancelled_seconds"`
	Rules            []RetentionRuleView `json:"rules"`
	IntervalSeconds  float64             `json:"interval_seconds"`
	MaxShare         float64             `json:"max_share"`
	FloorSeconds     float64             `json:"floor_seconds"`
}

// RetentionRuleView is one rule of a RetentionView.
type RetentionRuleView struct {
	State       skiplock.JobState `json:"state"`
	Queue       string            `json:"queue"`
	Kind        string            `json:"kind"`
	KeepSeconds *float64          `json:"keep_seconds"`
}

// NewRetentionView answers the view of a retention.
func NewRetentionView(r skiplock.Retention) RetentionView {
	v := RetentionView{Enabled: !r.Disabled, CompletedSeconds: keepSeconds(r.Completed),
		FailedSeconds: keepSeconds(r.Failed), CancelledSeconds: keepSeconds(r.Cancelled),
		Rules: []RetentionRuleView{}, IntervalSeconds: r.Interval.Seconds(), MaxShare: r.MaxShare,
		FloorSeconds: r.Floor.Seconds()}
	for _, rule := range r.Rules {
		v.Rules = append(v.Rules, RetentionRuleView{State: rule.State, Queue: rule.Queue, Kind: rule.Kind,
			KeepSeconds: keepSeconds(rule.Keep)})
	}
	return v
}

func keepSeconds(d time.Duration) *float64 {
	if d < 0 {
		return nil
	}
	s := math.Round(d.Seconds()*1000) / 1000
	return &s
}

// JanitorAnswer is the answer of GET /v1/janitor.
type JanitorAnswer struct {
	Retention RetentionView    `json:"retention"`
	Runs      []JanitorRunView `json:"runs"`
}

// JanitorStatus answers the retention and the last runs, as GET
// /v1/janitor does (the CLI prints the same).
func JanitorStatus(ctx context.Context, c *skiplock.Client, limit int) (*JanitorAnswer, error) {
	runs, err := c.JanitorRuns(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := &JanitorAnswer{Retention: NewRetentionView(c.Retention()), Runs: make([]JanitorRunView, len(runs))}
	for i, r := range runs {
		out.Runs[i] = NewJanitorRunView(r)
	}
	return out, nil
}

func (s *Server) janitorStatus(w http.ResponseWriter, r *http.Request, p *principal) error {
	if err := unscoped(p); err != nil {
		return err
	}
	limit := defaultJanitorRuns
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > skiplock.MaxJanitorRuns {
			return badRequest("limit", "must be an integer between 1 and %d, got %q", skiplock.MaxJanitorRuns, truncate(v, 40))
		}
		limit = n
	}
	out, err := JanitorStatus(r.Context(), s.client, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
