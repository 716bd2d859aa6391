package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/internal/dbopen"
	"github.com/skiplock/skiplock/server"
	"github.com/skiplock/skiplock/skiplockotel"
)

func init() { extraCommands = append(extraCommands, newServeCmd) }

// Defaults of `skiplock serve`.
const (
	defaultListen     = "127.0.0.1:8080"
	defaultConfigFile = "skiplock.yaml"
	shutdownTimeout   = 30 * time.Second
)

// serveConfig is the configuration of `skiplock serve`, from flags, then
// SKIPLOCK_* environment variables, then the config file.
type serveConfig struct {
	DatabaseURL string `yaml:"database_url"`
	// ReadDatabaseURL is a streaming replica that the dashboard, lists,
	// stats and exports read from (docs/scale.md).
	ReadDatabaseURL string `yaml:"read_database_url"`
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
	// file is the config file read, "" for none.
	file string
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

func newServeCmd(g *globals) *cobra.Command {
	var flags serveConfig
	var configFile string
	var keep retentionFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API, the worker protocol and the maintenance services",
		Long: `Run the HTTP API (docs/api.md) for producers and workers in any language,
with /metrics and /healthz, and the maintenance services. With no flags it
serves ./skiplock.db (created and migrated) on 127.0.0.1:8080.

Configuration: flags, then environment (SKIPLOCK_DATABASE_URL,
SKIPLOCK_READ_DATABASE_URL, SKIPLOCK_LISTEN,
SKIPLOCK_INSECURE, SKIPLOCK_MAX_PAYLOAD_BYTES, SKIPLOCK_CONTRACTS,
SKIPLOCK_CONTRACTS_WIN, SKIPLOCK_LOG_LEVEL, SKIPLOCK_LOG_FORMAT, SKIPLOCK_VAULT),
then the file (./skiplock.yaml or --config). Tracing follows the OTEL_*
environment.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags.DatabaseURL, flags.ReadDatabaseURL = g.databaseURL, g.readDatabaseURL
			cfg, err := loadServeConfig(cmd, flags, configFile)
			if err != nil {
				return err
			}
			keep.apply(cmd, &cfg.Retention)
			return serve(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.StringVar(&flags.Listen, "listen", "", "address to listen on (default "+defaultListen+")")
	f.BoolVar(&flags.Insecure, "insecure", false, "allow a non-loopback address without any token")
	f.Int64Var(&flags.MaxPayloadBytes, "max-payload-bytes", 0, "largest job payload in bytes (default 1 MiB)")
	f.StringVar(&flags.Contracts, "contracts", "", "contract file of the job kinds (docs/contracts.md)")
	f.StringVar(&flags.ContractsWin, "contracts-win", "", "when --contracts differs from the stored contracts: stored or file wins (default: refuse to start)")
	f.StringVar(&flags.LogLevel, "log-level", "", "debug, info, warn or error (default info)")
	f.StringVar(&flags.LogFormat, "log-format", "", logFormatUsage)
	f.StringVar(&flags.Vault, "vault", "", "keep finished jobs in this vault before retention deletes them: a directory or s3://BUCKET/PREFIX (docs/vault.md)")
	f.StringVar(&configFile, "config", "", "config file (default ./"+defaultConfigFile+" when it exists)")
	addRetentionFlags(cmd, &keep)
	return cmd
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

// serve runs until ctx ends (SIGTERM, SIGINT), then shuts down in order:
// long polls and event streams end, in-flight requests finish, the
// maintenance client stops, the database closes.
func serve(ctx context.Context, cfg serveConfig) error {
	level, _ := logLevel(cfg.LogLevel)
	log, err := newLogger(os.Stderr, cfg.LogFormat, level)
	if err != nil {
		return err
	}
	traces, err := setupTracing(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err := traces.shutdown(); err != nil {
			log.Warn("tracing", "error", err)
		}
	}()
	var contracts *contract.Set
	if cfg.Contracts != "" {
		var err error
		if contracts, err = contract.Load(cfg.Contracts); err != nil {
			return usagef("--contracts: %v", err)
		}
	}
	periodic, err := periodicJobs(cfg.Periodic)
	if err != nil {
		return err
	}
	win, err := contractsWin(cfg.ContractsWin)
	if err != nil {
		return err
	}
	flow, err := flowRules(cfg.Flow)
	if err != nil {
		return err
	}
	fair, err := fairness(cfg.Fairness)
	if err != nil {
		return err
	}
	retention, keep, err := cfg.retentionAndVault(ctx)
	if err != nil {
		return err
	}
	// Listen before opening the database: a busy port must not leave a new
	// database file behind.
	ln, err := listen(cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	logStartup(log, cfg, contracts, flow, fair)
	loopback := server.IsLoopback(cfg.Listen)
	db, err := openServeDB(ctx, cfg, loopback)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Driver.Migrator().Up(ctx, 0); err != nil {
		return fmt.Errorf("migrate the database: %w", err)
	}
	log.Info("database", "driver", db.Driver.Name(), "url", redactURL(cfg.DatabaseURL))
	if cfg.ReadDatabaseURL != "" {
		log.Info("read replica", "url", redactURL(cfg.ReadDatabaseURL), "reads", "dashboard, lists, stats, metrics, exports")
	}
	store, err := db.Tokens()
	if err != nil {
		return err
	}
	tokens, err := store.TokenCount(ctx)
	if err != nil {
		return fmt.Errorf("count tokens: %w", err)
	}
	if tokens == 0 && !loopback && !cfg.Insecure {
		return refuseWithoutTokens(cfg.Listen)
	}
	ccfg := &skiplock.Config{Logger: log, Contracts: contracts, ContractsWin: win, PeriodicJobs: periodic,
		Retention: retention, Vault: keep, Flow: flow, Fairness: fair}
	if traces.on() {
		skiplockotel.New(&skiplockotel.Config{TracerProvider: traces.tp}).Install(ccfg)
		log.Info("tracing", "exporter", traces.exporter)
	}
	client, err := skiplock.NewClient(db.Driver, ccfg)
	if keep != nil {
		log.Info("vault", "location", fmt.Sprint(keep))
	}
	if err != nil {
		return usagef("%v", err)
	}
	srv, err := server.New(server.Config{Client: client, Logger: log,
		OpenWithoutTokens: loopback || cfg.Insecure, MaxPayloadBytes: cfg.MaxPayloadBytes})
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := client.Start(ctx); err != nil {
		return contractsErr(err)
	}
	defer stopClient(client, log)
	log.Info("listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String())
	logAuthMode(log, tokens, loopback, cfg.Insecure)
	return runHTTP(ctx, ln, srv, log)
}

func logAuthMode(log *slog.Logger, tokens int, loopback, insecure bool) {
	switch {
	case tokens > 0:
		log.Info("auth", "mode", "tokens", "tokens", tokens)
	case loopback:
		log.Warn("auth", "mode", "open", "note", "no tokens: open to anyone on this machine (loopback only); create one with `skiplock token create`")
	default:
		log.Warn("auth", "mode", "open-insecure", "note", "no tokens and --insecure: open to anyone who can reach this address")
	}
}

func runHTTP(ctx context.Context, ln net.Listener, srv *server.Server, log *slog.Logger) error {
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 60 * time.Second,
		// Above the longest long poll (60 s); claims and event streams
		// extend their own deadline.
		WriteTimeout: 90 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	// HTTP/1.1 and HTTP/2 without TLS (h2c, prior knowledge) on one port:
	// a worker's claims and reports share one connection.
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	hs.Protocols.SetUnencryptedHTTP2(true)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests")
	_ = srv.Close()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("shutdown: requests still running at deadline", "error", err)
		_ = hs.Close()
	}
	return nil
}

func stopClient(c *skiplock.Client, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		log.Warn("stop maintenance", "error", err)
	}
}

// redactURL hides a password in a database URL.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil || !strings.Contains(s, "://") {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
