package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skiplock/skiplock/internal/testwait"
)

// serveUntil starts serve in dir with env added, waits until its log holds
// want, stops it and answers what it logged.
func serveUntil(t *testing.T, dir, want string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(cli(t), append([]string{"serve", "--listen", "127.0.0.1:0", "--database-url", filepath.Join(dir, "s.db")}, args...)...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var log syncBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	testwait.Until(t, 30*time.Second, "serve listening", func() bool {
		select {
		case <-done:
			exited = true
			return true
		default:
		}
		return strings.Contains(log.String(), want)
	})
	if exited {
		t.Fatalf("serve exited: %s", log.String())
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-done
	return log.String()
}

// --log-format json writes one JSON object a line; a bad format, or a bad
// OTEL_* setting, exits 2 naming it.
func TestCLILogFormatAndTracingSettings(t *testing.T) {
	t.Parallel()
	out := serveUntil(t, t.TempDir(), `"msg":"listening"`, []string{"OTEL_TRACES_EXPORTER=console"}, "--log-format", "json")
	var sawTracing bool
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // the console exporter's spans, on shutdown
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if rec["msg"] == "tracing" && rec["exporter"] == "console" {
			sawTracing = true
		}
	}
	if !sawTracing {
		t.Fatalf("serve did not say it traces:\n%s", out)
	}
	dir := t.TempDir()
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"serve", "--log-format", "yaml"}, "--log-format"},
		{nil, []string{"worker", "--queue", "q", "--exec", "true", "--log-format", "xml"}, "--log-format"},
		{[]string{"OTEL_TRACES_EXPORTER=zipkin"}, []string{"serve", "--listen", "127.0.0.1:0"}, "OTEL_TRACES_EXPORTER"},
		{[]string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=carrier-pigeon"}, []string{"serve", "--listen", "127.0.0.1:0"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
	} {
		cmd := exec.Command(cli(t), append(c.args, "--database-url", filepath.Join(dir, "x.db"))...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), c.env...)
		res := runCmd(t, cmd)
		if res.code != 2 || !strings.Contains(res.stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 naming %s", c.env, c.args, res.code, res.stderr, c.want)
		}
	}
}
