package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/skiplock/skiplock/internal/dbopen"
)

// Worker processes: the bench runs the skiplock binary (Options.Exe) as
// `skiplock bench-worker`, once per process, working the bench queue over
// HTTP or through the library; each prints its running total of finished
// jobs as "worked N" lines on stdout (ReportWorked), which the bench sums.

// WorkedLine is the prefix of a worker process's running total;
// ReadyLine is the line by which it says it works.
const (
	WorkedLine = "worked "
	ReadyLine  = "ready"
)

// ReportWorked prints worked's total on w every reportEvery until ctx
// ends, and once more at the end.
func ReportWorked(ctx context.Context, w io.Writer, worked *atomic.Int64) {
	t := time.NewTicker(reportEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(w, "%s%d\n", WorkedLine, worked.Load())
			return
		case <-t.C:
			fmt.Fprintf(w, "%s%d\n", WorkedLine, worked.Load())
		}
	}
}

const reportEvery = 50 * time.Millisecond

// procGroup is running worker processes.
type procGroup struct {
	cmds []*exec.Cmd
	wg   sync.WaitGroup
	// stderr keeps the tail of each process's standard error, for errors.
	stderr []*tailBuffer
	exited chan error
	// claims sums the HTTP workers' claim times (ClaimsLine).
	claims ClaimHist
}

// startProcs starts one process of exe per argument list and waits until
// each has said it works (ReadyLine), so that process start-up is not timed;
// every finished job a process reports calls onWork.
func startProcs(exe string, args [][]string, env []string, onWork func(n int64)) (*procGroup, error) {
	g := &procGroup{exited: make(chan error, len(args))}
	ready := make(chan struct{}, len(args))
	for i, a := range args {
		cmd := exec.Command(exe, a...)
		cmd.Env = append(os.Environ(), env...)
		cmd.Dir = os.TempDir() // no ./skiplock.yaml of the caller's
		tail := &tailBuffer{}
		cmd.Stderr = tail
		out, err := cmd.StdoutPipe()
		if err != nil {
			g.stop()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			g.stop()
			return nil, fmt.Errorf("start worker process: %w", err)
		}
		g.cmds, g.stderr = append(g.cmds, cmd), append(g.stderr, tail)
		g.wg.Go(func() {
			var last int64
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == ReadyLine {
					ready <- struct{}{}
					continue
				}
				if strings.HasPrefix(sc.Text(), ClaimsLine) {
					_ = g.claims.Merge(sc.Text())
					continue
				}
				total, ok := strings.CutPrefix(sc.Text(), WorkedLine)
				if !ok {
					continue
				}
				if n, err := strconv.ParseInt(total, 10, 64); err == nil && n > last {
					onWork(n - last)
					last = n
				}
			}
			err := cmd.Wait()
			if err == nil {
				err = errors.New("exited")
			}
			g.exited <- fmt.Errorf("worker process %d: %w: %s", i+1, err, tail.String())
		})
	}
	timeout := time.After(2 * time.Minute)
	for range args {
		select {
		case <-ready:
		case err := <-g.exited:
			return nil, errors.Join(err, g.stop())
		case <-timeout:
			return nil, errors.Join(errors.New("worker processes did not start within 2 minutes"), g.stop())
		}
	}
	return g, nil
}

// stop asks every process to end (SIGTERM) and waits for them; after 30 s
// it kills them.
func (g *procGroup) stop() error {
	for _, c := range g.cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		for _, c := range g.cmds {
			_ = c.Process.Kill()
		}
		<-done
	}
	close(g.exited)
	var errs []error
	for err := range g.exited {
		if !strings.Contains(err.Error(), ": exited: ") && !strings.Contains(err.Error(), "signal: terminated") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// tailBuffer keeps the last 4 kB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = append(t.b[:0], t.b[len(t.b)-4096:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

var listeningRE = regexp.MustCompile(`msg=listening addr=(\S+)`)

// poolFullLog is in the line a server logs when one of its pools was full.
const poolFullLog = "connection budget: the "

// serverProc is a `skiplock serve` process on a port of its choosing.
type serverProc struct {
	cmd  *exec.Cmd
	URL  string
	tail *tailBuffer
	done chan error
	// poolFull counts by pool the lines that said a pool was full;
	// lastPoolFull is the last of them.
	mu           sync.Mutex
	poolFull     map[string]int
	lastPoolFull string
}

var poolRE = regexp.MustCompile(`pool=(\w+)`)

// poolWarnings answers how many times the server said each pool was full,
// and the last such line.
func (s *serverProc) poolWarnings() (map[string]int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.poolFull), s.lastPoolFull
}

// startServer runs `exe serve` on databaseURL with extra arguments and
// waits until it listens.
func startServer(ctx context.Context, exe, databaseURL string, extra []string) (*serverProc, error) {
	kind, err := dbopen.Kind(databaseURL)
	if err != nil {
		return nil, err
	}
	if kind == "sqlite" && !strings.HasPrefix(databaseURL, "sqlite:") {
		databaseURL = "sqlite:" + databaseURL
	}
	cmd := exec.Command(exe, append([]string{"serve", "--listen", "127.0.0.1:0", "--database-url", databaseURL}, extra...)...)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "SKIPLOCK_CONFIG=")
	pr, pw := io.Pipe()
	tail := &tailBuffer{}
	cmd.Stderr = io.MultiWriter(pw, tail)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server process: %w", err)
	}
	s := &serverProc{cmd: cmd, tail: tail, done: make(chan error, 1), poolFull: map[string]int{}}
	go func() { s.done <- cmd.Wait(); pw.Close() }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
			if strings.Contains(sc.Text(), poolFullLog) {
				pool := "?"
				if m := poolRE.FindStringSubmatch(sc.Text()); m != nil {
					pool = m[1]
				}
				s.mu.Lock()
				s.poolFull[pool]++
				s.lastPoolFull = sc.Text()
				s.mu.Unlock()
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case addr := <-found:
		s.URL = "http://" + addr
		return s, nil
	case err := <-s.done:
		return nil, fmt.Errorf("server process exited: %v: %s", err, tail.String())
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return nil, ctx.Err()
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("server process did not listen within a minute: %s", tail.String())
	}
}

// stop ends the server (SIGTERM) and waits for it.
func (s *serverProc) stop() error {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("server process did not stop within 30 s: %s", s.tail.String())
	}
}

// runProducer runs `exe bench-producer args…` until it exits and answers
// what it printed last (ParseProduced).
func runProducer(ctx context.Context, exe string, args []string) (sent int64, figures string, err error) {
	cmd := exec.CommandContext(ctx, exe, append([]string{"bench-producer"}, args...)...)
	cmd.Dir = os.TempDir() // no ./skiplock.yaml of the caller's
	cmd.Env = append(os.Environ(), "SKIPLOCK_CONFIG=")
	tail := &tailBuffer{}
	cmd.Stderr = tail
	out, err := cmd.Output()
	if err != nil {
		return 0, "", fmt.Errorf("producer process: %w: %s", err, tail.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return ParseProduced(lines[len(lines)-1])
}
