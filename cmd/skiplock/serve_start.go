package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver/pgdriver"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// listen opens the server's address; a port in use is the operator's to
// change (exit 2), with the next port as a suggestion.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, usagef("address %s is in use; choose another with --listen %s", addr, nextPort(addr))
	}
	if errors.Is(err, syscall.EACCES) {
		return nil, usagef("address %s: permission denied (ports below 1024 need privileges); choose another with --listen", addr)
	}
	return nil, fmt.Errorf("listen on %s: %w", addr, err)
}

// nextPort answers addr with the port after its own, e.g. 127.0.0.1:8081
// for 127.0.0.1:8080.
func nextPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil || n <= 0 || n >= 65535 {
		return net.JoinHostPort(host, "8081")
	}
	return net.JoinHostPort(host, strconv.Itoa(n+1))
}

// logStartup says where the configuration came from: the config file (or
// none), the contracts and their kinds, the periodic jobs, the flow rules
// and the fairness weights.
func logStartup(log *slog.Logger, cfg serveConfig, contracts *contract.Set, flow []skiplock.FlowRule, fair map[string]skiplock.Fairness) {
	logConfigFile(log, cfg.file)
	if contracts != nil {
		logContracts(log, cfg.Contracts, contracts)
	} else {
		log.Info("contracts", "file", "none")
	}
	logPeriodic(log, cfg.Periodic)
	logFlow(log, flow)
	logFairness(log, fair)
}

// logFlow writes a line per flow rule: what it picks and its limit.
func logFlow(log *slog.Logger, rules []skiplock.FlowRule) {
	if len(rules) == 0 {
		log.Info("flow rules", "count", 0)
		return
	}
	for _, r := range rules {
		limit := flowLimit(skiplock.QueueFlow{Concurrency: r.Concurrency, Rate: r.Rate, Per: r.Per})
		log.Info("flow rule", "name", r.Name, "queue", orAny(r.Queue), "kind", orAny(r.Kind), "key", orAny(r.Key), "limit", limit)
	}
}

// logFairness writes a line per queue that weighs its tenants.
func logFairness(log *slog.Logger, queues map[string]skiplock.Fairness) {
	if len(queues) == 0 {
		log.Info("fairness", "queues", 0)
		return
	}
	for _, q := range slices.Sorted(maps.Keys(queues)) {
		weights := queues[q].Weights
		parts := make([]string, 0, len(weights))
		for _, t := range slices.Sorted(maps.Keys(weights)) {
			parts = append(parts, fmt.Sprintf("%s=%d", t, weights[t]))
		}
		log.Info("fairness", "queue", q, "weights", strings.Join(parts, ","))
	}
}

func orAny(s string) string {
	if s == "" {
		return "any"
	}
	return s
}

func logConfigFile(log *slog.Logger, file string) {
	if file == "" {
		log.Info("config file", "file", "none", "note", "no ./"+defaultConfigFile+" and no --config or SKIPLOCK_CONFIG: flags and environment only")
		return
	}
	log.Info("config file", "file", file)
}

func logContracts(log *slog.Logger, file string, set *contract.Set) {
	names := make([]string, 0, len(set.Kinds()))
	for _, k := range set.Kinds() {
		names = append(names, k.Kind)
	}
	log.Info("contracts", "file", file, "strict", set.Strict, "kinds", strings.Join(names, ","))
}

func logPeriodic(log *slog.Logger, entries []periodicConfig) {
	if len(entries) == 0 {
		log.Info("periodic jobs", "count", 0)
		return
	}
	for _, e := range entries {
		queue := e.Queue
		if queue == "" {
			queue = "default"
		}
		log.Info("periodic job", "name", e.Name, "schedule", e.Schedule, "kind", e.Kind, "queue", queue, "catch_up", e.CatchUp)
	}
}

// openServeDB opens the database serve serves. Only a database that holds
// tokens may serve an address other than loopback without --insecure; a
// new SQLite file holds none, so none is created only to be refused.
func openServeDB(ctx context.Context, cfg serveConfig, loopback bool, log *slog.Logger) (dbopen.Opened, error) {
	g := &globals{databaseURL: cfg.DatabaseURL, listenDatabaseURL: cfg.ListenDatabaseURL, readDatabaseURL: cfg.ReadDatabaseURL,
		pools: pgdriver.Pools(cfg.Pools), logger: log}
	open := g.open
	if !loopback && !cfg.Insecure {
		open = g.openExisting
	}
	db, err := open(ctx)
	if errors.Is(err, dbopen.ErrNoDatabase) {
		return db, refuseWithoutTokens(cfg.Listen)
	}
	return db, err
}

func refuseWithoutTokens(listen string) error {
	return usagef("refusing to serve %s without tokens: create one with `skiplock token create --role admin`, listen on 127.0.0.1, or pass --insecure", listen)
}
