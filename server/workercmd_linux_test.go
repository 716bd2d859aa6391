//go:build linux

package server_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
)

// TestWorkerCommandKilledTakesItsCommand: when `skiplock worker` dies,
// even by SIGKILL, the command it runs dies with it, children included,
// rather than overlap with the job's next attempt on another worker.
func TestWorkerCommandKilledTakesItsCommand(t *testing.T) {
	b := setup(t, databases[len(databases)-1], nil)
	dir := t.TempDir()
	// sh runs a child (sleep) and a grandchild (a subshell's sleep), and
	// writes down their pids.
	script := fmt.Sprintf(`echo $$ > %[1]s/sh.pid
sleep 300 & echo $! > %[1]s/child.pid
(sleep 300 & echo $! > %[1]s/grandchild.pid; wait) &
wait`, dir)
	if err := os.WriteFile(filepath.Join(dir, "job.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	j := id(must(t, b.do(t, "POST", "/v1/jobs", "", `{"kind":"long","queue":"killed"}`), 201).job())
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, skiplockBinary(t), "worker", "--server", b.ts.URL, "--queue", "killed",
		"--exec", "sh "+filepath.Join(dir, "job.sh"), "--wait", "1s")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	names := []string{"sh", "child", "grandchild"}
	pids := map[string]int{}
	testwait.Until(t, 60*time.Second, "the command's pids", func() bool {
		for _, name := range names {
			raw, err := os.ReadFile(filepath.Join(dir, name+".pid"))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil || pid == 0 {
				return false
			}
			pids[name] = pid
		}
		return true
	})
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL) // should the test fail, leave nothing behind
		}
	})
	for _, name := range names {
		if !alive(pids[name]) {
			t.Fatalf("%s (pid %d) is not running under the worker\n%s", name, pids[name], logs.String())
		}
	}
	if st := fencedJob(t, b, j)["state"]; st != "running" {
		t.Fatalf("job %d is %v", j, st)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for _, name := range names {
		testwait.Until(t, 20*time.Second, fmt.Sprintf("the %s (pid %d) of the killed worker to die", name, pids[name]),
			func() bool { return !alive(pids[name]) })
	}
}

// alive reports whether pid runs: a zombie (dead, not yet reaped by a
// parent that may never reap it) counts as dead.
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}
