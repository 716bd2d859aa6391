package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
)

// retentionConfig is the `retention:` block of skiplock.yaml:
//
//	retention:
//	  completed: 7d
//	  failed: 30d
//	  rules:
//	    - {state: completed, queue: audit, keep: 90d}
type retentionConfig struct {
	Enabled   *bool                 `yaml:"enabled"`
	Completed string                `yaml:"completed"`
	Failed    string                `yaml:"failed"`
	Cancelled string                `yaml:"cancelled"`
	History   string                `yaml:"history"`
	Interval  string                `yaml:"interval"`
	MaxShare  float64               `yaml:"max_share"`
	Floor     string                `yaml:"floor"`
	Rules     []retentionRuleConfig `yaml:"rules"`
}

type retentionRuleConfig struct {
	State string `yaml:"state"`
	Queue string `yaml:"queue"`
	Kind  string `yaml:"kind"`
	Keep  string `yaml:"keep"`
}

// retentionFlags are the retention flags of serve and janitor run; they
// override the file.
type retentionFlags struct {
	completed, failed, cancelled string
}

func addRetentionFlags(cmd *cobra.Command, f *retentionFlags) {
	fs := cmd.Flags()
	fs.StringVar(&f.completed, "keep-completed", "", "keep completed jobs this long: 7d, 36h or forever (default 7d)")
	fs.StringVar(&f.failed, "keep-failed", "", "keep failed jobs this long (default 30d)")
	fs.StringVar(&f.cancelled, "keep-cancelled", "", "keep cancelled jobs this long (default 30d)")
}

// apply sets the flags given on cmd over the file's block.
func (f retentionFlags) apply(cmd *cobra.Command, r *retentionConfig) {
	fs := cmd.Flags()
	for _, s := range []struct {
		flag string
		val  string
		dst  *string
	}{{"keep-completed", f.completed, &r.Completed}, {"keep-failed", f.failed, &r.Failed},
		{"keep-cancelled", f.cancelled, &r.Cancelled}} {
		if fs.Changed(s.flag) {
			*s.dst = s.val
		}
	}
}

// retention answers the block as the client's Retention; an error names
// the key (or the flag that set it).
func (r retentionConfig) retention() (skiplock.Retention, error) {
	var out skiplock.Retention
	if r.Enabled != nil {
		out.Disabled = !*r.Enabled
	}
	keeps := []struct {
		name string
		src  string
		dst  *time.Duration
	}{{"completed", r.Completed, &out.Completed}, {"failed", r.Failed, &out.Failed},
		{"cancelled", r.Cancelled, &out.Cancelled}, {"history", r.History, &out.History}}
	for _, k := range keeps {
		if k.src == "" {
			continue
		}
		d, err := skiplock.ParseKeep(k.src)
		if err != nil {
			if k.name == "history" {
				return out, usagef("retention.history: %v", err)
			}
			return out, usagef("retention.%s (--keep-%s): %v", k.name, k.name, err)
		}
		*k.dst = d
	}
	for name, src := range map[string]struct {
		s   string
		dst *time.Duration
	}{"interval": {r.Interval, &out.Interval}, "floor": {r.Floor, &out.Floor}} {
		if src.s == "" {
			continue
		}
		d, err := skiplock.ParseKeep(src.s)
		if err != nil || d < 0 {
			return out, usagef("retention.%s: %q is not a duration (for example 1h or 2d)", name, src.s)
		}
		*src.dst = d
	}
	if r.MaxShare < 0 || r.MaxShare > 1 {
		return out, usagef("retention.max_share: must be between 0 and 1, got %g", r.MaxShare)
	}
	out.MaxShare = r.MaxShare
	for i, rule := range r.Rules {
		switch st := skiplock.JobState(rule.State); {
		case st != skiplock.StateCompleted && st != skiplock.StateFailed && st != skiplock.StateCancelled:
			return out, usagef("retention.rules[%d].state: must be completed, failed or cancelled, got %q", i, rule.State)
		case rule.Queue == "" && rule.Kind == "":
			return out, usagef("retention.rules[%d]: name a queue or a kind (the state's own retention is retention.%s)", i, rule.State)
		}
		keep, err := skiplock.ParseKeep(rule.Keep)
		if err != nil {
			return out, usagef("retention.rules[%d].keep: %v", i, err)
		}
		out.Rules = append(out.Rules, skiplock.RetentionRule{State: skiplock.JobState(rule.State),
			Queue: rule.Queue, Kind: rule.Kind, Keep: keep})
	}
	return out, nil
}

// openVaultAt opens the vault at a URL (`--vault`, `vault:` in
// skiplock.yaml) for the janitor to store jobs in before deleting them.
// The vault package's wiring sets it (to vault.Open) from an init in this
// command's vault.go; while it is nil, a vault URL is refused.
var openVaultAt func(ctx context.Context, url string) (skiplock.Vault, error)

// openVault answers the vault at url, nil for "".
func openVault(ctx context.Context, url string) (skiplock.Vault, error) {
	if url == "" {
		return nil, nil
	}
	if openVaultAt == nil {
		return nil, usagef("--vault: this build of skiplock has no vault support")
	}
	v, err := openVaultAt(ctx, url)
	if err != nil {
		return nil, usagef("--vault: %v", err)
	}
	return v, nil
}

// retentionAndVault answers the retention and the vault of cfg for a
// client; NewClient checks the rest of the retention (rule states, a rule
// naming neither queue nor kind).
func (cfg serveConfig) retentionAndVault(ctx context.Context) (skiplock.Retention, skiplock.Vault, error) {
	r, err := cfg.Retention.retention()
	if err != nil {
		return r, nil, err
	}
	v, err := openVault(ctx, cfg.Vault)
	return r, v, err
}
