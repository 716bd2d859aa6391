package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// HTTPWorker works a queue of no-op jobs through a Skiplock server, as a
// worker in another language would (docs/api.md): claims of up to Max jobs
// with a long poll, each carrying the report of the jobs of the claim
// before it ("complete"), so that a round is one call. Loops claims are in
// flight at once.
type HTTPWorker struct {
	// Server is the server's base URL, e.g. http://127.0.0.1:8080.
	Server   string
	Queue    string
	WorkerID string
	// Max is jobs per claim (1–1000); Loops claims in flight at once.
	Max, Loops int
	// H2C speaks HTTP/2 without TLS (prior knowledge) instead of HTTP/1.1.
	H2C bool
	// FullJobs claims whole job objects; otherwise a claim names the
	// fields a worker runs a job with (id, attempt, kind, payload).
	FullJobs bool
	// SeparateReports reports each claim's jobs in a
	// POST /v1/jobs/complete of their own, a second call a round.
	SeparateReports bool
	// Token is a bearer token, when the server wants one.
	Token string
	// Ready, when set, is called once, after the first claim answered.
	Ready func()
	// Claims, when set, counts how long each claim call that answered jobs
	// took, from request to answer (the report it carries included); a
	// claim that answered none waited on an empty queue, not on the server.
	Claims *ClaimHist
}

// Run works until ctx ends, adding each batch of finished jobs to worked;
// it answers the first error that is not ctx's.
func (w *HTTPWorker) Run(ctx context.Context, worked *atomic.Int64) error {
	if w.Max < 1 || w.Max > 1000 {
		return fmt.Errorf("claim max: must be between 1 and 1000, got %d", w.Max)
	}
	loops := max(w.Loops, 1)
	client := &http.Client{Transport: w.transport(loops)}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	errs := make(chan error, loops)
	var ready sync.Once
	for range loops {
		wg.Go(func() {
			var held []claimedJob // run, and reported with the next claim
			for ctx.Err() == nil {
				n, next, err := w.round(ctx, client, held)
				if err == nil && w.Ready != nil {
					ready.Do(w.Ready)
				}
				worked.Add(int64(n))
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				held = next
			}
			// The jobs of the last claim: reported on their own.
			if len(held) > 0 {
				n, err := w.report(context.WithoutCancel(ctx), client, held)
				worked.Add(int64(n))
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func (w *HTTPWorker) transport(conns int) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = conns
	tr.MaxIdleConns = conns
	if w.H2C {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return tr
}

// claimedJob is what a worker reads of a claimed job: what it would run
// the job with, and report it with.
type claimedJob struct {
	ID      int64           `json:"id"`
	Attempt int             `json:"attempt"`
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
}

// reportOutcome is one job's outcome in a report's answer.
type reportOutcome struct {
	OK    bool `json:"ok"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// round claims, reporting held (jobs it ran) with the claim unless
// SeparateReports, and "works" the claimed jobs (no-ops); it answers how
// many jobs its reports finished, and the jobs it now holds.
func (w *HTTPWorker) round(ctx context.Context, client *http.Client, held []claimedJob) (int, []claimedJob, error) {
	body := append(make([]byte, 0, 128+len(held)*(48+len(w.Queue))), `{"worker_id":`...)
	body = strconv.AppendQuote(body, w.WorkerID)
	body = append(body, `,"max":`...)
	body = strconv.AppendInt(body, int64(w.Max), 10)
	body = append(body, `,"wait_seconds":1`...)
	if !w.FullJobs {
		body = append(body, `,"fields":["kind","payload"]`...)
	}
	if len(held) > 0 && !w.SeparateReports {
		body = w.appendReport(append(body, `,"complete":`...), held)
	}
	body = append(body, '}')
	var claimed struct {
		Jobs      []claimedJob    `json:"jobs"`
		Completed []reportOutcome `json:"completed"`
	}
	// The claim must not be cut off half way: a claim that committed and
	// was not answered leaves its jobs to the rescuer.
	start := time.Now()
	if err := w.post(context.WithoutCancel(ctx), client, "/v1/queues/"+w.Queue+"/claim", body, &claimed); err != nil {
		return 0, held, err
	}
	if w.Claims != nil && len(claimed.Jobs) > 0 {
		w.Claims.Add(time.Since(start))
	}
	n := 0
	if len(held) > 0 && !w.SeparateReports {
		var err error
		if n, err = countFinished(claimed.Completed, len(held)); err != nil {
			return n, claimed.Jobs, err
		}
	}
	if w.SeparateReports && len(claimed.Jobs) > 0 {
		n, err := w.report(ctx, client, claimed.Jobs)
		return n, nil, err
	}
	return n, claimed.Jobs, nil
}

// report reports jobs in one POST /v1/jobs/complete and answers how many
// it finished.
func (w *HTTPWorker) report(ctx context.Context, client *http.Client, jobs []claimedJob) (int, error) {
	b := append(make([]byte, 0, 64+len(jobs)*(48+len(w.Queue))), `{"worker_id":`...)
	b = strconv.AppendQuote(b, w.WorkerID)
	b = append(w.appendReport(append(b, `,"jobs":`...), jobs), '}')
	var done struct {
		Results []reportOutcome `json:"results"`
	}
	if err := w.post(context.WithoutCancel(ctx), client, "/v1/jobs/complete", b, &done); err != nil {
		return 0, err
	}
	return countFinished(done.Results, len(jobs))
}

// appendReport appends the report of jobs, finished without a result: a
// JSON array of {id, attempt, queue}. The claim's queue is each job's: on
// Citus it sends the report to that queue's shard alone.
func (w *HTTPWorker) appendReport(b []byte, jobs []claimedJob) []byte {
	b = append(b, '[')
	for i, j := range jobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, j.ID, 10)
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(j.Attempt), 10)
		b = strconv.AppendQuote(append(b, `,"queue":`...), w.Queue)
		b = append(b, '}')
	}
	return append(b, ']')
}

// countFinished answers how many outcomes are ok, and an error for the
// first that is not (a bench job is never refused) or a count that is not
// that of the jobs reported.
func countFinished(outcomes []reportOutcome, reported int) (int, error) {
	n := 0
	for _, r := range outcomes {
		if !r.OK {
			msg := "no error"
			if r.Error != nil {
				msg = r.Error.Code + ": " + r.Error.Message
			}
			return n, fmt.Errorf("a report was refused: %s", msg)
		}
		n++
	}
	if n != reported {
		return n, fmt.Errorf("a report of %d jobs answered %d outcomes", reported, n)
	}
	return n, nil
}

// post sends one call; a 503 (the database did not answer) is tried again
// after a pause, as a worker should, up to ten times.
func (w *HTTPWorker) post(ctx context.Context, client *http.Client, path string, body []byte, into any) error {
	wait := 50 * time.Millisecond
	for try := 1; ; try++ {
		err := w.postOnce(ctx, client, path, body, into)
		if !errors.Is(err, errUnavailable) || try == 10 {
			return err
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		wait = min(2*wait, 2*time.Second)
	}
}

var errUnavailable = errors.New("503")

func (w *HTTPWorker) postOnce(ctx context.Context, client *http.Client, path string, body []byte, into any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.Server+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if w.Token != "" {
		req.Header.Set("Authorization", "Bearer "+w.Token)
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode == http.StatusServiceUnavailable {
		return fmt.Errorf("POST %s: %w: %s", path, errUnavailable, bytes.TrimSpace(raw))
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", path, res.Status, bytes.TrimSpace(raw))
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return errors.Join(fmt.Errorf("POST %s: answer", path), err)
	}
	return nil
}
