package main

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/internal/dbopen"
)

// Defaults of `skiplock serve`.
const (
	defaultListen     = "127.0.0.1:8080"
	defaultConfigFile = "skiplock.yaml"
	shutdownTimeout   = 30 * time.Second
)

// serveConfig is the configuration of `skiplock serve`, from flags, then
// SKIPLOCK_* environment variables, then the config file.
type serveConfig struct {
	DatabaseURL     string `yaml:"database_url"`
	Listen          string `yaml:"listen"`
	Insecure        bool   `yaml:"insecure"`
	MaxPayloadBytes int64  `yaml:"max_payload_bytes"`
	Contracts       string `yaml:"contracts"`
	ContractsWin    string `yaml:"contracts_win"`
	LogLevel        string `yaml:"log_level"`
	LogFormat       string `yaml:"log_format"`
	// Vault is where retention stores finished jobs before deleting them
	// (docs/vault.md); "" deletes them without a copy.
	Vault string `yaml:"vault"`
	// Periodic jobs come from the file only.
	Periodic []periodicConfig `yaml:"periodic"`
	// Retention of finished jobs (docs/retention.md); flags override it.
	Retention retentionConfig `yaml:"retention"`
	// Flow are rate limits and concurrency keys (docs/flow-control.md).
	Flow []flowConfig `yaml:"flow"`
	// Fairness shares queues between their tenants (docs/flow-control.md).
	Fairness map[string]fairnessConfig `yaml:"fairness"`
	// ReadDatabaseURL is a streaming replica that the dashboard, lists,
	// stats and exports read from (docs/scale.md).
	ReadDatabaseURL string `yaml:"read_database_url"`
	// ListenDatabaseURL is a direct URL for LISTEN when DatabaseURL goes
	// through PgBouncer in transaction mode (docs/scale.md).
	ListenDatabaseURL string `yaml:"listen_database_url"`
	// Pools split the database connections by role within a budget.
	Pools poolsConfig `yaml:"pools"`
	// file is the config file read, "" for none.
	file string
	// poolsFrom names where each pool's size came from, by its file key
	// ("budget": "--pool-budget"), for errors; absent: the file.
	poolsFrom map[string]string
}

// periodicConfig declares a cron job in skiplock.yaml:
//
//	periodic:
//	  - {name: nightly-janitor, schedule: "0 3 * * *", kind: janitor, payload: {days: 7}}
type periodicConfig struct {
	Name     string         `yaml:"name"`
	Schedule string         `yaml:"schedule"`
	Kind     string         `yaml:"kind"`
	Payload  map[string]any `yaml:"payload"`
	Queue    string         `yaml:"queue"`
	Priority *int           `yaml:"priority"`
	CatchUp  bool           `yaml:"catch_up"`
}

// periodicJobs turns the file's periodic entries into client jobs; an error
// names the entry and the field.
func periodicJobs(entries []periodicConfig) ([]skiplock.PeriodicJob, error) {
	var out []skiplock.PeriodicJob
	for i, e := range entries {
		var payload json.RawMessage
		if e.Payload != nil {
			b, err := json.Marshal(e.Payload)
			if err != nil {
				return nil, usagef("config file: periodic[%d].payload: %v", i, err)
			}
			payload = b
		}
		pj, err := skiplock.ParsePeriodic(e.Name, e.Schedule, e.Kind, payload)
		if err != nil {
			return nil, usagef("config file: periodic[%d].%v", i, err)
		}
		pj.CatchUp = e.CatchUp
		pj.Opts = &skiplock.InsertOpts{Queue: e.Queue, Priority: e.Priority}
		out = append(out, pj)
	}
	return out, nil
}

// loadServeConfig merges the flags set, the environment and the file.
func loadServeConfig(cmd *cobra.Command, flags serveConfig, configFile string) (serveConfig, error) {
	var file serveConfig
	path, explicit := configFile, configFile != ""
	if !explicit {
		path = os.Getenv("SKIPLOCK_CONFIG")
		explicit = path != ""
	}
	if !explicit {
		path = defaultConfigFile
	}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := yaml.UnmarshalWithOptions(b, &file, yaml.Strict()); err != nil {
			return file, configFileError(path, err)
		}
		file.file = path
	case explicit || !errors.Is(err, os.ErrNotExist):
		return file, usagef("config file: %v", err)
	}
	cfg := file
	env := func(name string) (string, bool) { return os.LookupEnv("SKIPLOCK_" + name) }
	pick := func(set bool, val string, envName string, dst *string) {
		if set {
			*dst = val
		} else if v, ok := env(envName); ok && v != "" {
			*dst = v
		}
	}
	fs := cmd.Flags()
	pick(flags.DatabaseURL != "", flags.DatabaseURL, "DATABASE_URL", &cfg.DatabaseURL)
	pick(flags.ListenDatabaseURL != "", flags.ListenDatabaseURL, "LISTEN_DATABASE_URL", &cfg.ListenDatabaseURL)
	pick(flags.ReadDatabaseURL != "", flags.ReadDatabaseURL, "READ_DATABASE_URL", &cfg.ReadDatabaseURL)
	pick(fs.Changed("listen"), flags.Listen, "LISTEN", &cfg.Listen)
	pick(fs.Changed("contracts"), flags.Contracts, "CONTRACTS", &cfg.Contracts)
	pick(fs.Changed("contracts-win"), flags.ContractsWin, "CONTRACTS_WIN", &cfg.ContractsWin)
	pick(fs.Changed("log-level"), flags.LogLevel, "LOG_LEVEL", &cfg.LogLevel)
	pick(fs.Changed("log-format"), flags.LogFormat, "LOG_FORMAT", &cfg.LogFormat)
	pick(fs.Changed("vault"), flags.Vault, "VAULT", &cfg.Vault)
	if fs.Changed("insecure") {
		cfg.Insecure = flags.Insecure
	} else if v, ok := env("INSECURE"); ok && v != "" {
		if cfg.Insecure, err = strconv.ParseBool(v); err != nil {
			return cfg, usagef("SKIPLOCK_INSECURE: %q is not a boolean", v)
		}
	}
	if err := mergePools(fs, flags.Pools, &cfg); err != nil {
		return cfg, err
	}
	if fs.Changed("max-payload-bytes") {
		cfg.MaxPayloadBytes = flags.MaxPayloadBytes
	} else if v, ok := env("MAX_PAYLOAD_BYTES"); ok && v != "" {
		if cfg.MaxPayloadBytes, err = strconv.ParseInt(v, 10, 64); err != nil {
			return cfg, usagef("SKIPLOCK_MAX_PAYLOAD_BYTES: %q is not a number of bytes", v)
		}
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = dbopen.DefaultURL
	}
	if cfg.Listen == "" {
		cfg.Listen = defaultListen
	}
	return cfg, checkServeConfig(cfg)
}

func checkServeConfig(cfg serveConfig) error {
	if cfg.MaxPayloadBytes < 0 || cfg.MaxPayloadBytes > 1<<30 {
		return usagef("--max-payload-bytes: must be between 1 and %d, got %d", 1<<30, cfg.MaxPayloadBytes)
	}
	_, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return usagef("--listen: %q is not HOST:PORT: %v", cfg.Listen, err)
	}
	if _, err := net.LookupPort("tcp", port); port != "" && err != nil {
		return usagef("--listen: port %q must be a number from 0 to 65535 (or a service name)", port)
	}
	if _, err := dbopen.Kind(cfg.DatabaseURL); err != nil {
		return usagef("--database-url: %v", err)
	}
	if cfg.ListenDatabaseURL != "" {
		if kind, err := dbopen.Kind(cfg.ListenDatabaseURL); err != nil || kind != "postgres" {
			return usagef("--listen-database-url: %q is not a postgres:// URL", cfg.ListenDatabaseURL)
		}
	}
	if err := checkPools(cfg); err != nil {
		return err
	}
	if err := dbopen.CheckReadURL(cfg.DatabaseURL, cfg.ReadDatabaseURL); err != nil {
		return usagef("--read-database-url: %v", err)
	}
	if _, err := logLevel(cfg.LogLevel); err != nil {
		return err
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" && cfg.LogFormat != "" {
		return usagef("--log-format: %q is not text or json", cfg.LogFormat)
	}
	return nil
}

func logLevel(s string) (slog.Level, error) {
	var l slog.Level
	if s == "" {
		return slog.LevelInfo, nil
	}
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, usagef("--log-level: %q is not debug, info, warn or error", s)
	}
	return l, nil
}
