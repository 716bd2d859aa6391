package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/skiplock/skiplock"
)

// flowConfig is a flow rule in skiplock.yaml (docs/flow-control.md):
//
//	flow:
//	  - {name: per-host, queue: crawl, key: payload.host, concurrency: 2, rate: 10, per: 1s}
type flowConfig struct {
	Name        string `yaml:"name"`
	Queue       string `yaml:"queue"`
	Kind        string `yaml:"kind"`
	Key         string `yaml:"key"`
	Concurrency int    `yaml:"concurrency"`
	Rate        int    `yaml:"rate"`
	Per         string `yaml:"per"`
}

// flowYAMLNames names the rules' fields as the file does, in the client's
// errors about them.
var flowYAMLNames = strings.NewReplacer("config: Flow[", "config file: flow[", "].Name", "].name",
	"].Key", "].key", "].Concurrency", "].concurrency", "].Rate", "].rate", "].Per", "].per",
	"set Queue or Kind", "set queue or kind", "set Concurrency or Rate", "set concurrency or rate",
	"only used with Rate", "only used with rate")

// flowRules turns the file's flow entries into the client's rules and
// checks them; an error names the entry and the field.
func flowRules(entries []flowConfig) ([]skiplock.FlowRule, error) {
	var out []skiplock.FlowRule
	for i, e := range entries {
		r := skiplock.FlowRule{Name: e.Name, Queue: e.Queue, Kind: e.Kind, Key: e.Key, Concurrency: e.Concurrency, Rate: e.Rate}
		if e.Per != "" {
			d, err := time.ParseDuration(e.Per)
			if err != nil {
				return nil, usagef("config file: flow[%d].per: %q is not a duration such as 1s or 1m", i, e.Per)
			}
			r.Per = d
		}
		out = append(out, r)
	}
	if err := skiplock.CheckFlowRules(out); err != nil {
		return nil, usagef("%s", flowYAMLNames.Replace(err.Error()))
	}
	return out, nil
}

// fileFlowRules reads the flow rules of the config file (SKIPLOCK_CONFIG,
// else ./skiplock.yaml when it exists), so that the jobs a command inserts
// get the keys `skiplock serve` would give them, and `queues list` shows
// the rules.
func fileFlowRules() ([]skiplock.FlowRule, error) {
	path := os.Getenv("SKIPLOCK_CONFIG")
	explicit := path != ""
	if !explicit {
		path = defaultConfigFile
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		return nil, nil
	}
	if err != nil {
		return nil, usagef("config file: %v", err)
	}
	var file serveConfig
	if err := yaml.UnmarshalWithOptions(b, &file, yaml.Strict()); err != nil {
		return nil, configFileError(path, err)
	}
	return flowRules(file.Flow)
}

// printFlow prints the flow rules of the queues and their use, when any
// queue has one.
func printFlow(w io.Writer, queues []skiplock.QueueInfo) error {
	t := newTable(w, "QUEUE", "RULE", "LIMIT", "KEY", "RUNNING", "KEYS", "BUSIEST")
	shown := false
	for _, q := range queues {
		for _, f := range q.Flow {
			shown = true
			key := f.Key
			if key == "" {
				key = "-"
			}
			t.row(q.Name, f.Rule, flowLimit(f), key, f.Running, f.Keys, busiest(f))
		}
	}
	if !shown {
		return nil
	}
	fmt.Fprintln(w)
	return t.flush()
}

func flowLimit(f skiplock.QueueFlow) string {
	var parts []string
	if f.Concurrency > 0 {
		parts = append(parts, fmt.Sprintf("%d running", f.Concurrency))
	}
	if f.Rate > 0 {
		parts = append(parts, fmt.Sprintf("%d per %s", f.Rate, f.Per))
	}
	return strings.Join(parts, ", ")
}

// busiest describes the busiest key: its value, running jobs and tokens.
func busiest(f skiplock.QueueFlow) string {
	if len(f.Busy) == 0 {
		return "-"
	}
	k := f.Busy[0]
	v := k.Value
	if v == "" {
		v = "(all)"
	}
	s := fmt.Sprintf("%s: %d running", v, k.Running)
	if k.Tokens != nil {
		s += fmt.Sprintf(", %.1f tokens", *k.Tokens)
	}
	return s
}
