package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// Producer processes: latency-remote and latency-http run the skiplock
// binary as `skiplock bench-producer`, which enqueues one job at a time at
// a fixed rate, each stamped with the time of its insert call, and ends
// with a ProducedLine on stdout. The bench's own workers take the jobs, so
// that a job's latency crosses processes as it does where users deploy.

// ProducedLine is the prefix of a producer process's last line:
// "produced sent=N insert_p50_ms=… insert_p99_ms=…".
const ProducedLine = "produced "

// Produced is what a producer process did.
type Produced struct {
	Sent int64
	// Calls are the insert calls' durations, sorted.
	Calls []time.Duration
}

// Figures are the insert calls' percentiles, "insert_p50_ms=… insert_p99_ms=…":
// the part of the latency that is the insert's own round trip.
func (p Produced) Figures() string {
	return fmt.Sprintf("insert_p50_ms=%.2f insert_p99_ms=%.2f", ms(percentile(p.Calls, 0.50)), ms(percentile(p.Calls, 0.99)))
}

// Line is Produced as a producer process prints it.
func (p Produced) Line() string {
	return fmt.Sprintf("%ssent=%d %s", ProducedLine, p.Sent, p.Figures())
}

// ParseProduced reads a producer process's ProducedLine: the jobs sent and
// the insert figures, as Result.Extra carries them.
func ParseProduced(line string) (sent int64, figures string, err error) {
	rest, ok := strings.CutPrefix(line, ProducedLine)
	if !ok {
		return 0, "", fmt.Errorf("producer process: want a line %q…, got %q", ProducedLine, line)
	}
	first, figures, _ := strings.Cut(rest, " ")
	n, ok := strings.CutPrefix(first, "sent=")
	if !ok {
		return 0, "", fmt.Errorf("producer process: no sent= in %q", line)
	}
	if sent, err = strconv.ParseInt(n, 10, 64); err != nil {
		return 0, "", fmt.Errorf("producer process: sent= in %q: %w", line, err)
	}
	return sent, figures, nil
}

// Produce enqueues one job at a time through insert at perSec a second
// for d, each stamped with the time its insert call began, and answers
// how many it sent and how long each call took.
func Produce(ctx context.Context, insert func(ctx context.Context, stamp time.Time) error, perSec float64, d time.Duration) (Produced, error) {
	calls := make([]time.Duration, 0, int(perSec*d.Seconds())+1)
	err := paced(ctx, time.Now(), perSec, d, func(time.Time) error {
		stamp := time.Now()
		if err := insert(ctx, stamp); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		calls = append(calls, time.Since(stamp))
		return nil
	})
	if err != nil {
		return Produced{}, err
	}
	slices.Sort(calls)
	return Produced{Sent: int64(len(calls)), Calls: calls}, nil
}

// ProducerConfig is a producer process's settings (bench-producer): it
// inserts through the library into the database at DatabaseURL, or
// through POST /v1/jobs of the server at Server.
type ProducerConfig struct {
	DatabaseURL string
	Server      string
	Rate        float64
	Duration    time.Duration
}

// RunProducer enqueues Rate jobs a second for Duration and prints the
// ProducedLine on w.
func RunProducer(ctx context.Context, c ProducerConfig, w io.Writer) error {
	if (c.Server == "") == (c.DatabaseURL == "") {
		return errors.New("give a server URL or a database URL")
	}
	var p Produced
	var err error
	if c.Server != "" {
		p, err = produceHTTP(ctx, c)
	} else {
		p, err = produceLib(ctx, c)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, p.Line())
	return err
}

// produceLib inserts through a client that works nothing: each insert
// wakes the workers elsewhere through the database.
func produceLib(ctx context.Context, c ProducerConfig) (Produced, error) {
	db, err := dbopen.Open(ctx, c.DatabaseURL)
	if err != nil {
		return Produced{}, err
	}
	defer db.Close()
	client, err := skiplock.NewClient(db.Driver, &skiplock.Config{})
	if err != nil {
		return Produced{}, err
	}
	opts := &skiplock.InsertOpts{Queue: Queue}
	p, err := Produce(ctx, func(ctx context.Context, stamp time.Time) error {
		_, err := client.Insert(ctx, noop{T: stamp.UnixNano()}, opts)
		return err
	}, c.Rate, c.Duration)
	// Stop sends the wake-ups still waiting out their debounce.
	if serr := client.Stop(context.WithoutCancel(ctx)); err == nil {
		err = serr
	}
	return p, err
}

// produceHTTP enqueues through POST /v1/jobs, one call a job, on one
// kept-alive connection.
func produceHTTP(ctx context.Context, c ProducerConfig) (Produced, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	url := strings.TrimSuffix(c.Server, "/") + "/v1/jobs"
	return Produce(ctx, func(ctx context.Context, stamp time.Time) error {
		body, err := json.Marshal(map[string]any{"kind": noop{}.Kind(), "queue": Queue,
			"payload": noop{T: stamp.UnixNano()}})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("POST /v1/jobs: %s: %s", resp.Status, bytes.TrimSpace(answer))
		}
		return nil
	}, c.Rate, c.Duration)
}
