package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skiplock/skiplock/internal/pgtest"
)

// serve takes its pool sizes from --pool-* flags, then SKIPLOCK_POOL_*,
// then the file; the pools it opened are in its "database" line.
func TestCLIServePoolFlagsOverrideFile(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	dir := t.TempDir()
	// The file's budget alone would be refused: the flag's wins.
	if err := os.WriteFile(filepath.Join(dir, "skiplock.yaml"), []byte("pools: {budget: 3, claims: 2, completions: 2}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := serveLog(t, dir, "--database-url", url, "--pool-budget", "8")
	if want := "pools_budget=8 pools_claims=2 pools_completions=2 pools_maintenance=1"; !strings.Contains(got, want) {
		t.Errorf("flag over file: log lacks %q:\n%s", want, got)
	}
	got = serveLogEnv(t, dir, []string{"SKIPLOCK_POOL_BUDGET=9", "SKIPLOCK_POOL_CLAIMS=3"}, "--database-url", url)
	if want := "pools_budget=9 pools_claims=3 pools_completions=2 pools_maintenance=1"; !strings.Contains(got, want) {
		t.Errorf("environment over file: log lacks %q:\n%s", want, got)
	}
	got = serveLogEnv(t, dir, []string{"SKIPLOCK_POOL_BUDGET=3"}, "--database-url", url, "--pool-budget", "10", "--pool-maintenance", "1")
	if want := "pools_budget=10 pools_claims=2 pools_completions=2 pools_maintenance=1"; !strings.Contains(got, want) {
		t.Errorf("flag over environment: log lacks %q:\n%s", want, got)
	}
}

// A pool size the budget cannot hold, or that is not a number, exits 2
// with one line naming the flag or variable it came from.
func TestCLIServePoolBudgetRefused(t *testing.T) {
	t.Parallel()
	_, url := pgtest.Schema(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "skiplock.yaml"), []byte("pools: {budget: 20}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := []string{"serve", "--listen", "127.0.0.1:0", "--database-url", url}
	r := runCLIIn(t, dir, append(serve, "--pool-budget", "3", "--pool-claims", "2", "--pool-completions", "2")...)
	wantUsage(t, "budget too small", r, "--pool-budget: 3 connections do not hold claims 2 + completions 2 + maintenance (at least 1) + listener 1")
	r = runCLIIn(t, dir, append(serve, "--pool-claims", "-1")...)
	wantUsage(t, "negative pool", r, "--pool-claims: must be 0 (the default) or more, got -1")
	r = runCLIIn(t, dir, "serve", "--listen", "127.0.0.1:0", "--database-url", filepath.Join(dir, "s.db"), "--pool-budget", "6")
	wantUsage(t, "pools on SQLite", r, "--pool-budget: connection pools apply to PostgreSQL only")
	for env, want := range map[string]string{
		"SKIPLOCK_POOL_BUDGET=2":       "SKIPLOCK_POOL_BUDGET: 2 connections do not hold",
		"SKIPLOCK_POOL_COMPLETIONS=ab": `SKIPLOCK_POOL_COMPLETIONS: "ab" is not a whole number of connections`,
	} {
		cmd := exec.Command(cli(t), serve...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env)
		wantUsage(t, env, runCmd(t, cmd), want)
	}
}
