package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/skiplock/skiplock/bench"
)

// latency-remote: the jobs are enqueued by a process of their own (this
// command again, with --produce), one at a time at --rate through the
// system's client into its schema, while the workers of this process take
// them: the wake-up crosses processes, as where users deploy.

// producerArgs are the arguments of the producer process of system name,
// inserting into the schema that url reaches.
func producerArgs(name, url string, o options) []string {
	return []string{"--produce", name, "--database-url", url,
		"--rate", strconv.FormatFloat(o.rate, 'g', -1, 64), "--latency", o.latency.String()}
}

// runProducerProcess runs this command as the producer of system name and
// answers the jobs it sent and its insert figures.
func runProducerProcess(ctx context.Context, name, url string, o options) (int64, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, "", fmt.Errorf("find this command for the producer process: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, producerArgs(name, url, o)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, "", fmt.Errorf("producer process: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return bench.ParseProduced(lines[len(lines)-1])
}

// produce is the producer process: it enqueues o.rate jobs a second for
// o.latency through system's client and prints bench's produced line.
func produce(ctx context.Context, system string, o options) error {
	if system == "skiplock" {
		return bench.RunProducer(ctx, bench.ProducerConfig{DatabaseURL: o.url, Rate: o.rate, Duration: o.latency}, os.Stdout)
	}
	s, ok := riverSystems()[system]
	if !ok {
		return fmt.Errorf("--produce: no system %q", system)
	}
	pool, err := pgxpool.New(ctx, o.url)
	if err != nil {
		return err
	}
	defer pool.Close()
	// An insert-only client with the workers' settings: River spaces its
	// insert wake-ups by FetchCooldown.
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{FetchCooldown: s.FetchCooldown,
		FetchPollInterval: s.FetchInterval})
	if err != nil {
		return err
	}
	p, err := bench.Produce(ctx, func(ctx context.Context, stamp time.Time) error {
		_, err := client.Insert(ctx, noopArgs{T: stamp.UnixNano()}, nil)
		return err
	}, o.rate, o.latency)
	if err != nil {
		return err
	}
	_, err = fmt.Println(p.Line())
	return err
}
