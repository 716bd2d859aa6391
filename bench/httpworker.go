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
// with a long poll, and each claim's jobs reported in one
// POST /v1/jobs/complete. Loops claims are in flight at once.
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
	// Token is a bearer token, when the server wants one.
	Token string
	// Ready, when set, is called once, after the first claim answered.
	Ready func()
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
			for ctx.Err() == nil {
				n, err := w.round(ctx, client)
				if err == nil && w.Ready != nil {
					ready.Do(w.Ready)
				}
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				worked.Add(int64(n))
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

// claimedJobs is the part of a claim's answer the worker reads: what it
// would run a job with, and report it with.
type claimedJobs struct {
	Jobs []struct {
		ID      int64           `json:"id"`
		Attempt int             `json:"attempt"`
		Kind    string          `json:"kind"`
		Payload json.RawMessage `json:"payload"`
	} `json:"jobs"`
}

type completedJobs struct {
	Results []struct {
		OK    bool `json:"ok"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"results"`
}

// round claims, "works" the jobs (no-ops) and reports them; it answers
// how many finished.
func (w *HTTPWorker) round(ctx context.Context, client *http.Client) (int, error) {
	body := `{"worker_id":` + strconv.Quote(w.WorkerID) + `,"max":` + strconv.Itoa(w.Max) + `,"wait_seconds":1`
	if !w.FullJobs {
		body += `,"fields":["kind","payload"]`
	}
	body += "}"
	var claimed claimedJobs
	// The claim must not be cut off half way: a claim that committed and
	// was not answered leaves its jobs to the rescuer.
	if err := w.post(context.WithoutCancel(ctx), client, "/v1/queues/"+w.Queue+"/claim", []byte(body), &claimed); err != nil {
		return 0, err
	}
	if len(claimed.Jobs) == 0 {
		return 0, nil
	}
	b := make([]byte, 0, 64+len(claimed.Jobs)*40)
	b = append(b, `{"worker_id":`...)
	b = strconv.AppendQuote(b, w.WorkerID)
	b = append(b, `,"jobs":[`...)
	for i, j := range claimed.Jobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = strconv.AppendInt(b, j.ID, 10)
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(j.Attempt), 10)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	var done completedJobs
	if err := w.post(context.WithoutCancel(ctx), client, "/v1/jobs/complete", b, &done); err != nil {
		return 0, err
	}
	n := 0
	for _, r := range done.Results {
		if !r.OK {
			msg := "no error"
			if r.Error != nil {
				msg = r.Error.Code + ": " + r.Error.Message
			}
			return n, fmt.Errorf("complete refused a job: %s", msg)
		}
		n++
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
