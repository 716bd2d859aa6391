package server_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The long form: go test ./server -run TestChaos -chaos.duration=10m -chaos.kills=30
var (
	chaosDuration = flag.Duration("chaos.duration", 20*time.Second, "how long TestChaos enqueues and works jobs while it kills the server")
	chaosKills    = flag.Int("chaos.kills", 3, "how many times TestChaos kills the server (SIGKILL) in that time")
)

// TestChaos runs `skiplock serve` under producers and HTTP workers with
// two-second leases and kills it (SIGKILL) at random moments, restarting
// it on the same port and database. Every job it acknowledged ends
// completed, and no completion of an attempt whose lease was lost is
// accepted. Half the workers report each job with its own call, half with
// their next claim ("complete").
func TestChaos(t *testing.T) {
	eachDB(t, func(t *testing.T, db database) {
		c := &chaos{t: t, dbURL: db.url(t), dir: t.TempDir(), acked: map[int64]string{}}
		c.srv = startServe(t, c.dir, nil, "--database-url", c.dbURL, "--listen", "127.0.0.1:0")
		c.base = c.srv.url()
		stopProducing, stopWorking := make(chan struct{}), make(chan struct{})
		var producers, workers sync.WaitGroup
		for i := range 3 {
			producers.Go(func() { c.produce(i, stopProducing) })
		}
		for i := range 8 {
			workers.Go(func() { c.work(fmt.Sprintf("chaos-w%d", i), i%2 == 1, stopWorking) })
		}
		c.killAtRandom(*chaosDuration, *chaosKills)
		close(stopProducing)
		producers.Wait()
		c.drain(60 * time.Second)
		close(stopWorking)
		workers.Wait()
		c.check()
	})
}

// chaos is one run: the server process, and what producers and workers saw.
type chaos struct {
	t     *testing.T
	dbURL string
	dir   string
	base  string
	srv   *process // the running server; only the test goroutine changes it

	mu       sync.Mutex
	acked    map[int64]string // job id → its payload token, once answered 201
	attempts []attemptRecord
	bad5xx   []string
	n503     atomic.Int64
	carried  atomic.Int64 // reports answered in a claim's "completed"
	kills    int
	final    map[int64]map[string]any // job id → the job after the drain
}

// attemptRecord is one attempt a worker ran.
type attemptRecord struct {
	job, attempt int64
	worker       string
	claimedAt    time.Time
	leaseUntil   time.Time // the latest lease the server granted it
	finishedAt   time.Time
	lost         bool // a heartbeat answered that the lease was lost
	completed    int  // the status the completion was answered (0: none)
}

// call is a request that notes 5xx answers; a connection error (the
// server is down) is the caller's to retry.
func (c *chaos) call(method, path, body string) (answer, error) {
	a, err := tryRequest(c.base, method, path, body)
	switch {
	case err != nil:
	case a.status == http.StatusServiceUnavailable:
		c.n503.Add(1)
	case a.status >= 500:
		c.mu.Lock()
		c.bad5xx = append(c.bad5xx, fmt.Sprintf("%s %s: %d %s", method, path, a.status, a.raw))
		c.mu.Unlock()
	}
	return a, err
}

// produce enqueues jobs with unique tokens until stop; a job whose answer
// was lost is sent again under its idempotency key.
func (c *chaos) produce(p int, stop <-chan struct{}) {
	for i := 0; ; i++ {
		token := fmt.Sprintf("p%d-%d", p, i)
		body := fmt.Sprintf(`{"kind":"chaos","payload":{"token":%q},"idempotency_key":%q}`, token, token)
		for {
			select {
			case <-stop:
				return
			default:
			}
			a, err := c.call("POST", "/v1/jobs", body)
			if err == nil && (a.status == http.StatusCreated || a.status == http.StatusOK) {
				c.mu.Lock()
				c.acked[id(a.job())] = token
				c.mu.Unlock()
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(120 * time.Millisecond) // below what the workers take, so that the queue drains
	}
}

// work claims one job at a time and runs it until stop.
func (c *chaos) work(workerID string, carry bool, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	var held []attemptRecord // worked, to report with the next claim
	defer func() {
		// Stopping: what no claim will carry goes on its own.
		for _, rec := range held {
			c.finish(rec, c.report(rec, "complete", `"result":{"ok":true}`).status)
		}
	}()
	for {
		select {
		case <-stop:
			return
		default:
		}
		// Sent again with the same reports until it is answered: a report
		// whose answer was lost then answers conflict, its job completed.
		a, err := c.call("POST", "/v1/queues/default/claim", claimBody(workerID, held))
		if err != nil || a.status != http.StatusOK {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		outcomes := maps(a.body["completed"])
		if len(outcomes) != len(held) {
			c.t.Errorf("a claim reporting %d jobs answered %d outcomes: %s", len(held), len(outcomes), a.raw)
		}
		for i, o := range outcomes {
			status := http.StatusConflict
			if o["ok"] == true {
				status = http.StatusOK
			}
			c.finish(held[i], status)
			c.carried.Add(1)
		}
		held = nil
		for _, j := range a.jobs() {
			rec := c.runAttempt(workerID, j, rng)
			switch {
			case rec.lost:
				c.finish(rec, 0)
			case carry:
				held = append(held, rec)
			default:
				c.finish(rec, c.report(rec, "complete", `"result":{"ok":true}`).status)
			}
		}
	}
}

// claimBody is a claim of one job with 2 s leases that reports held.
func claimBody(workerID string, held []attemptRecord) string {
	body := fmt.Sprintf(`{"worker_id":%q,"max":1,"wait_seconds":1,"lease_seconds":2`, workerID)
	if len(held) > 0 {
		body += `,"complete":[`
		for i, rec := range held {
			if i > 0 {
				body += ","
			}
			body += fmt.Sprintf(`{"id":%d,"attempt":%d,"result":{"ok":true}}`, rec.job, rec.attempt)
		}
		body += "]"
	}
	return body + "}"
}

// runAttempt works a claimed job for up to 200 ms, heartbeating; one in
// 25 stalls past its lease without heartbeats, so that the rescuer
// takes it. It answers the attempt, lost when a heartbeat was refused.
func (c *chaos) runAttempt(workerID string, j map[string]any, rng *rand.Rand) attemptRecord {
	attempt, _ := j["attempt"].(float64)
	rec := attemptRecord{job: id(j), attempt: int64(attempt), worker: workerID, claimedAt: time.Now(),
		leaseUntil: parseTime(j["lease_until"])}
	work, stall := time.Duration(rng.IntN(200))*time.Millisecond, rng.IntN(25) == 0
	if stall {
		work = 3 * time.Second
	}
	for end := time.Now().Add(work); time.Now().Before(end); {
		time.Sleep(min(400*time.Millisecond, time.Until(end)))
		if stall || !time.Now().Before(end) {
			continue
		}
		a := c.report(rec, "heartbeat", `"lease_seconds":2`)
		if a.status != http.StatusOK {
			rec.lost = true
			return rec
		}
		rec.leaseUntil = parseTime(a.body["lease_until"])
	}
	return rec
}

// finish records an attempt and the status its completion was answered
// (0: none was sent, or no answer came).
func (c *chaos) finish(rec attemptRecord, completed int) {
	rec.completed, rec.finishedAt = completed, time.Now()
	c.mu.Lock()
	c.attempts = append(c.attempts, rec)
	c.mu.Unlock()
}

// report sends a worker report, again while the server is down or
// answers 503, for up to 10 s; status 0 means no answer came.
func (c *chaos) report(rec attemptRecord, what, extra string) answer {
	body := fmt.Sprintf(`{"worker_id":%q,"attempt":%d,%s}`, rec.worker, rec.attempt, extra)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		a, err := c.call("POST", fmt.Sprintf("/v1/jobs/%d/%s", rec.job, what), body)
		if err == nil && a.status != http.StatusServiceUnavailable {
			return a
		}
	}
	return answer{}
}

func parseTime(v any) time.Time {
	s, _ := v.(string)
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// killAtRandom kills the server `kills` times at random moments within d,
// restarting it each time on the same address and database, and returns
// at the end of d.
func (c *chaos) killAtRandom(d time.Duration, kills int) {
	start := time.Now()
	at := make([]time.Duration, kills)
	for i := range at {
		at[i] = d/10 + rand.N(d*8/10)
	}
	slices.Sort(at)
	for _, when := range at {
		time.Sleep(time.Until(start.Add(when)))
		_ = c.srv.cmd.Process.Signal(syscall.SIGKILL)
		<-c.srv.done
		c.kills++
		c.srv = startServe(c.t, c.dir, nil, "--database-url", c.dbURL, "--listen", c.srv.addr)
	}
	time.Sleep(time.Until(start.Add(d)))
}

// drain waits until every acknowledged job is completed and keeps it.
func (c *chaos) drain(within time.Duration) {
	c.mu.Lock()
	pending := make([]int64, 0, len(c.acked))
	for id := range c.acked {
		pending = append(pending, id)
	}
	c.mu.Unlock()
	c.final = map[int64]map[string]any{}
	deadline := time.Now().Add(within)
	for len(pending) > 0 {
		var left []int64
		for _, jobID := range pending {
			j := must(c.t, request(c.t, c.base, "GET", fmt.Sprintf("/v1/jobs/%d", jobID), "", nil), 200).job()
			c.final[jobID] = j
			if j["state"] != "completed" {
				left = append(left, jobID)
			}
		}
		if pending = left; len(pending) > 0 && time.Now().After(deadline) {
			c.t.Fatalf("%d acknowledged jobs not completed after the drain, e.g. %v\nserver log:\n%s",
				len(pending), c.final[pending[0]], c.srv.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// check: every acknowledged job is completed with its own payload, no
// attempt was claimed twice, each completion the server accepted is of the
// job's final attempt and there is at most one per job, and no answer was
// a 5xx other than 503.
func (c *chaos) check() {
	t := c.t
	for jobID, token := range c.acked {
		j := c.final[jobID]
		payload, _ := j["payload"].(map[string]any)
		if j["state"] != "completed" || payload["token"] != token {
			t.Errorf("job %d (token %s): %v", jobID, token, j)
		}
	}
	accepted := map[int64]attemptRecord{}
	claimed := map[[2]int64]attemptRecord{}
	lost := 0
	for _, rec := range c.attempts {
		// A claim starts a new attempt: two workers never run the same one.
		if prev, dup := claimed[[2]int64{rec.job, rec.attempt}]; dup {
			t.Errorf("job %d: attempt %d claimed twice: %+v and %+v", rec.job, rec.attempt, prev, rec)
		}
		claimed[[2]int64{rec.job, rec.attempt}] = rec
		if rec.lost || rec.completed == http.StatusConflict {
			lost++
		}
		if rec.completed != http.StatusOK {
			continue
		}
		if prev, dup := accepted[rec.job]; dup {
			t.Errorf("job %d: two completions accepted: %+v and %+v", rec.job, prev, rec)
		}
		accepted[rec.job] = rec
		// Jobs enqueued but never acknowledged may be worked too; they
		// were not read back.
		if j := c.final[rec.job]; j != nil && rec.attempt != int64(j["attempt"].(float64)) {
			t.Errorf("job %d: completion of attempt %d accepted, the job's final attempt is %v: %+v", rec.job, rec.attempt, j["attempt"], rec)
		}
	}
	for _, s := range c.bad5xx {
		t.Errorf("5xx other than 503: %s", s)
	}
	t.Logf("%d kills, %d jobs acknowledged, %d attempts, %d completions accepted, %d attempts lost their lease, %d answers 503, %d reports answered in claims",
		c.kills, len(c.acked), len(c.attempts), len(accepted), lost, c.n503.Load(), c.carried.Load())
	if len(c.acked) == 0 || len(accepted) == 0 {
		t.Fatal("the run enqueued or completed nothing")
	}
}
