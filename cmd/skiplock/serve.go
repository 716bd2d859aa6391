package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/server"
	"github.com/skiplock/skiplock/skiplockotel"
)

func init() { extraCommands = append(extraCommands, newServeCmd) }

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
SKIPLOCK_LISTEN_DATABASE_URL, SKIPLOCK_READ_DATABASE_URL, SKIPLOCK_LISTEN,
SKIPLOCK_INSECURE, SKIPLOCK_MAX_PAYLOAD_BYTES, SKIPLOCK_CONTRACTS,
SKIPLOCK_CONTRACTS_WIN, SKIPLOCK_LOG_LEVEL, SKIPLOCK_LOG_FORMAT, SKIPLOCK_VAULT,
SKIPLOCK_POOL_BUDGET, SKIPLOCK_POOL_CLAIMS, SKIPLOCK_POOL_COMPLETIONS,
SKIPLOCK_POOL_MAINTENANCE), then the file (./skiplock.yaml or --config). Tracing follows the OTEL_*
environment.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flags.DatabaseURL, flags.ListenDatabaseURL, flags.ReadDatabaseURL = g.databaseURL, g.listenDatabaseURL, g.readDatabaseURL
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
	addServePoolFlags(f, &flags.Pools)
	f.StringVar(&configFile, "config", "", "config file (default ./"+defaultConfigFile+" when it exists)")
	addRetentionFlags(cmd, &keep)
	return cmd
}

// serve runs until ctx ends (SIGTERM, SIGINT), then shuts down in order:
// long polls and event streams end, in-flight requests finish, the
// maintenance client stops, the database closes.
func serve(ctx context.Context, cfg serveConfig) error {
	serveGC()
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
	db, err := openServeDB(ctx, cfg, loopback, log)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Driver.Migrator().Up(ctx, 0); err != nil {
		return fmt.Errorf("migrate the database: %w", err)
	}
	dbAttrs := []any{"driver", db.Driver.Name(), "url", redactURL(cfg.DatabaseURL)}
	if cfg.ListenDatabaseURL != "" {
		dbAttrs = append(dbAttrs, "listen_url", redactURL(cfg.ListenDatabaseURL))
	}
	log.Info("database", append(dbAttrs, poolsAttrs(db.Driver, cfg.Pools)...)...)
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

// serveGCPercent is the server's GOGC unless the environment sets one: its
// heap is small and short-lived (requests, claimed rows), so collecting
// once the heap has grown by four times what was live, instead of by as
// much again, spends less of the CPU the database shares.
const serveGCPercent = 400

func serveGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serveGCPercent)
	}
}
