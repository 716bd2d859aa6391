package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
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
	// does not start or stop it.
	Client *skiplock.Client
	Logger *slog.Logger
	// OpenWithoutTokens lets every request in while no token exists (a
	// loopback address or --insecure); otherwise they answer 401.
	OpenWithoutTokens bool
	// MaxPayloadBytes limits a job's payload (and result, checkpoint).
	MaxPayloadBytes int64
	// MaxBatchBodyBytes limits the body of a batch or a completion with
	// next jobs.
	MaxBatchBodyBytes int64
	// ClaimRecheckInterval is the fallback re-check of a long-poll claim
	// when no wake-up comes.
	ClaimRecheckInterval time.Duration
	// EventPollInterval is how often the event feed looks for changes
	// while someone listens.
	EventPollInterval time.Duration
	// AuthCacheTTL is how long a token lookup is trusted (negative: never).
	AuthCacheTTL time.Duration
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
	return c
}

// Server serves the HTTP API of docs/api.md on one client.
type Server struct {
	cfg    Config
	client *skiplock.Client
	drv    driver.Driver
	// stores are drv's optional stores: the client's watched driver has
	// every one, answering driver.ErrUnsupported for those its driver lacks.
	stores  driver.Full
	log     *slog.Logger
	handler http.Handler
	routes  []string

	auth    *authenticator
	wake    *queueWaker
	events  *eventHub
	metrics *metrics

	// ctx ends with Close: long polls answer and event streams end.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// New returns a server and starts its wake-up listener; Close stops it.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("server: config: Client must not be nil")
	}
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, client: cfg.Client, drv: cfg.Client.Driver(), log: cfg.Logger}
	stores, ok := s.drv.(driver.Full)
	if !ok {
		return nil, fmt.Errorf("server: the client's driver %T has not every optional store", s.drv)
	}
	s.stores = stores
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.auth = newAuthenticator(s.stores, cfg.OpenWithoutTokens, cfg.AuthCacheTTL)
	s.wake = newQueueWaker()
	s.events = newEventHub(s.stores, cfg.EventPollInterval, s.log)
	s.metrics = newMetrics(s.client, s.stores)
	s.handler = s.buildHandler()
	s.wg.Go(func() { s.listen(s.ctx) })
	return s, nil
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Routes lists the routes as "METHOD /pattern", for the OpenAPI check.
func (s *Server) Routes() []string { return append([]string(nil), s.routes...) }

// Close ends long polls (they answer what they have) and event streams,
// and stops the listener. Call it before http.Server.Shutdown, which waits
// for them. Safe to call twice.
func (s *Server) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.events.close()
		s.wg.Wait()
	})
	return nil
}

// listen turns the database's insert notifications into wake-ups of long
// polls, reconnecting on failure.
func (s *Server) listen(ctx context.Context) {
	n := s.drv.Notifier()
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.Listen(ctx, s.wake.wake, func(int64) {})
		if ctx.Err() != nil {
			return
		}
		// Wake-ups may have been missed while disconnected.
		s.wake.wakeAll()
		s.log.Warn("listen for notifications", "error", err, "retry_in", wait)
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(wait*2, 5*time.Second)
	}
}
