package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
)

// Defaults of a Config.
const (
	DefaultMaxPayloadBytes      = 1 << 20
	DefaultMaxBatchBodyBytes    = 64 << 20
	DefaultMaxBatchJobs         = 10000
	DefaultMaxWaitSeconds       = 60
	DefaultClaimRecheckInterval = time.Second
	DefaultEventPollInterval    = 250 * time.Millisecond
	DefaultAuthCacheTTL         = time.Second
)

// Config configures a Server.
type Config struct {
	// Client is the client the server acts through (required). The server
	// does not start or stop it; it keeps the client's wake-up listener
	// running (KeepListening) until Close, for its long polls.
	Client *skiplock.Client
	Logger *slog.Logger
	// OpenWithoutTokens lets every request in while no token exists (a
	// loopback address or --insecure); otherwise they answer 401.
	OpenWithoutTokens bool
	// MaxPayloadBytes limits a job's payload (and result, checkpoint).
	MaxPayloadBytes int64
	// MaxBatchBodyBytes limits the body of a batch, a completion with next
	// jobs, or a claim that reports finished jobs.
	MaxBatchBodyBytes int64
	// ClaimRecheckInterval is the fallback re-check of a long-poll claim
	// when no wake-up comes (ClaimParams.Recheck).
	ClaimRecheckInterval time.Duration
	// EventPollInterval is how often the event feed looks for changes
	// while someone listens.
	EventPollInterval time.Duration
	// AuthCacheTTL is how long a token lookup is trusted (negative: never).
	AuthCacheTTL time.Duration
	// BulkSyncLimit is how long POST /v1/jobs/bulk answers within: a bulk
	// action still running then goes on as an operation, and the request
	// answers 202 with it (operations.go).
	BulkSyncLimit time.Duration
}

func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxPayloadBytes <= 0 {
		c.MaxPayloadBytes = DefaultMaxPayloadBytes
	}
	if c.MaxBatchBodyBytes <= 0 {
		c.MaxBatchBodyBytes = max(DefaultMaxBatchBodyBytes, 4*c.MaxPayloadBytes)
	}
	if c.ClaimRecheckInterval <= 0 {
		c.ClaimRecheckInterval = DefaultClaimRecheckInterval
	}
	if c.EventPollInterval <= 0 {
		c.EventPollInterval = DefaultEventPollInterval
	}
	if c.AuthCacheTTL == 0 {
		c.AuthCacheTTL = DefaultAuthCacheTTL
	}
	if c.BulkSyncLimit <= 0 {
		c.BulkSyncLimit = DefaultBulkSyncLimit
	}
	return c
}

// Server serves the HTTP API of docs/api.md on one client.
type Server struct {
	cfg     Config
	client  *skiplock.Client
	log     *slog.Logger
	handler http.Handler
	routes  []string

	auth    *authenticator
	events  *eventHub
	ops     operations
	metrics *metrics
	claims  claimMemo
	// stopListening lets the client's wake-up listener go.
	stopListening func()

	// ctx ends with Close: long polls answer and event streams end.
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

// New returns a server; it keeps the client's wake-up listener running
// until Close.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("server: config: Client must not be nil")
	}
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, client: cfg.Client, log: cfg.Logger}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.auth = newAuthenticator(s.client.Tokens(), cfg.OpenWithoutTokens, cfg.AuthCacheTTL)
	s.events = newEventHub(s.client, cfg.EventPollInterval, s.log)
	s.metrics = newMetrics(s.client)
	s.handler = s.buildHandler()
	s.stopListening = s.client.KeepListening()
	return s, nil
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Routes lists the routes as "METHOD /pattern", for the OpenAPI check.
func (s *Server) Routes() []string { return append([]string(nil), s.routes...) }

// Close ends long polls (they answer what they have) and event streams,
// and lets the client's listener go. Call it before http.Server.Shutdown, which waits
// for them. Safe to call twice.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.events.close()
		s.ops.stop()
		s.stopListening()
	})
	return nil
}
