package skiplock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/internal/sqlitetest"
)

// TestConfigRefusesWhatCannotWork: a configuration that cannot work is
// refused when the client is made, with a message naming the field; zero
// takes the default.
func TestConfigRefusesWhatCannotWork(t *testing.T) {
	t.Parallel()
	worker := func(opts skiplock.WorkerOpts) *skiplock.Workers {
		ws := skiplock.NewWorkers()
		skiplock.MustAddWorker(ws, skiplock.WorkFunc[sleepArgs](nil), opts)
		return ws
	}
	queue := func(n int) map[string]skiplock.QueueConfig {
		return map[string]skiplock.QueueConfig{"q": {MaxWorkers: n}}
	}
	for _, c := range []struct {
		name string
		cfg  skiplock.Config
		want string // "" accepted; else the error's start
	}{
		{"zero", skiplock.Config{}, ""},
		{"heartbeat below lease", skiplock.Config{Lease: time.Minute, HeartbeatInterval: 59 * time.Second}, ""},
		{"heartbeat = lease", skiplock.Config{Lease: time.Minute, HeartbeatInterval: time.Minute},
			"config: HeartbeatInterval: must be shorter than Lease, 1m0s, got 1m0s"},
		{"heartbeat > default lease", skiplock.Config{HeartbeatInterval: time.Hour},
			"config: HeartbeatInterval: must be shorter than Lease, 5m0s, got 1h0m0s"},
		{"heartbeat >= a worker's lease", skiplock.Config{HeartbeatInterval: 30 * time.Second, Workers: worker(skiplock.WorkerOpts{Lease: 10 * time.Second})},
			`config: HeartbeatInterval: must be shorter than the lease of kind "sleep" (WorkerOpts.Lease), 10s, got 30s`},
		{"worker lease below 1s", skiplock.Config{Workers: worker(skiplock.WorkerOpts{Lease: 500 * time.Millisecond})},
			`config: Workers["sleep"]: WorkerOpts.Lease: must be at least 1s`},
		{"negative worker lease", skiplock.Config{Workers: worker(skiplock.WorkerOpts{Lease: -time.Second})},
			`config: Workers["sleep"]: WorkerOpts.Lease: must be at least 1s`},
		{"negative worker timeout", skiplock.Config{Workers: worker(skiplock.WorkerOpts{Timeout: -time.Second})},
			`config: Workers["sleep"]: WorkerOpts.Timeout: must not be negative`},
		{"negative lease", skiplock.Config{Lease: -time.Minute}, "config: Lease: must be at least 1s, got -1m0s"},
		{"negative heartbeat", skiplock.Config{HeartbeatInterval: -time.Second}, "config: HeartbeatInterval: must not be negative"},
		{"negative poll", skiplock.Config{FetchPollInterval: -time.Second}, "config: FetchPollInterval: must not be negative"},
		{"negative cooldown", skiplock.Config{FetchCooldown: -time.Second}, "config: FetchCooldown: must not be negative"},
		{"negative rescue", skiplock.Config{RescueInterval: -time.Second}, "config: RescueInterval: must not be negative"},
		{"negative scheduler", skiplock.Config{SchedulerInterval: -time.Second}, "config: SchedulerInterval: must not be negative"},
		{"negative leader ttl", skiplock.Config{LeaderTTL: -time.Second}, "config: LeaderTTL: must not be negative"},
		{"negative flow poll", skiplock.Config{FlowPollInterval: -time.Second}, "config: FlowPollInterval: must not be negative"},
		{"negative job timeout", skiplock.Config{JobTimeout: -time.Second}, "config: JobTimeout: must not be negative"},
		{"negative batch", skiplock.Config{CompleterBatchSize: -1}, "config: CompleterBatchSize: must not be negative (0 takes the default, 1000), got -1"},
		{"negative floor", skiplock.Config{Retention: skiplock.Retention{Floor: -time.Hour}}, "config: Retention.Floor: must not be negative"},
		{"default max workers", skiplock.Config{Queues: queue(0), Workers: worker(skiplock.WorkerOpts{})}, ""},
		{"negative max workers", skiplock.Config{Queues: queue(-1), Workers: worker(skiplock.WorkerOpts{})},
			`config: Queues["q"].MaxWorkers: must be between 1 and 10000 (0 takes the default, 1000), got -1`},
		{"too many workers", skiplock.Config{Queues: queue(10001), Workers: worker(skiplock.WorkerOpts{})},
			`config: Queues["q"].MaxWorkers: must be between 1 and 10000 (0 takes the default, 1000), got 10001`},
	} {
		_, err := skiplock.NewClient(sqlitetest.New(t), &c.cfg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v, want accepted", c.name, err)
		case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
			t.Errorf("%s: %v, want %s…", c.name, err, c.want)
		}
	}
}

// TestStartRefusesHeartbeatAboveAContractLease: a contract's lease is
// known when the client starts; a HeartbeatInterval not shorter than the
// lease of a kind the client works is refused then, naming the field.
func TestStartRefusesHeartbeatAboveAContractLease(t *testing.T) {
	t.Parallel()
	set, err := contract.Parse([]byte("version: 1\nkinds:\n  sleep: {lease: 20s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ws := skiplock.NewWorkers()
	skiplock.MustAddWorker(ws, skiplock.WorkFunc[sleepArgs](func(context.Context, *skiplock.Job[sleepArgs]) error { return nil }))
	c, err := skiplock.NewClient(sqlitetest.New(t), &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"q": {}},
		Workers: ws, Contracts: set, HeartbeatInterval: 30 * time.Second, ContractsWin: skiplock.ContractsConfigWins})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Start(t.Context())
	want := `skiplock: start: config: HeartbeatInterval: must be shorter than the lease of kind "sleep", 20s, got 30s`
	if err == nil || err.Error() != want {
		_ = c.Stop(t.Context())
		t.Fatalf("start: %v, want %s", err, want)
	}
}
