package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/skiplock/skiplock"
)

// The roles a token may have.
const (
	RoleAdmin    = "admin"
	RoleProducer = "producer"
	RoleWorker   = "worker"
	RoleViewer   = "viewer"
)

// Roles lists the roles.
var Roles = []string{RoleAdmin, RoleProducer, RoleWorker, RoleViewer}

// ValidRole reports whether role names a role.
func ValidRole(role string) bool {
	for _, r := range Roles {
		if r == role {
			return true
		}
	}
	return false
}

// NewToken answers a new secret token; only HashToken(secret) is stored.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "skl_" + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashToken is what the token store keeps of a secret: its SHA-256, hex.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// IsLoopback reports whether a listen address only takes local connections.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// principal is who makes a request: a token's role and tenant scope.
type principal struct {
	role string
	// tenant scopes the token to one tenant when scoped.
	tenant string
	scoped bool
	name   string
}

func (p *principal) can(need perm) bool {
	switch p.role {
	case RoleAdmin:
		return true
	case RoleProducer:
		return need == permRead || need == permEnqueue
	case RoleWorker:
		return need == permRead || need == permWork
	case RoleViewer:
		return need == permRead
	}
	return false
}

// sees reports whether the principal may see a job of tenant.
func (p *principal) sees(tenant string) bool { return !p.scoped || p.tenant == tenant }

// tenantFilter answers the tenant filter a listing must apply: the token's
// tenant when scoped, else the one asked for (nil: all).
func (p *principal) tenantFilter(asked *string) *string {
	if p.scoped {
		t := p.tenant
		return &t
	}
	return asked
}

// authenticator checks bearer tokens against the token store, caching
// lookups briefly so that a busy worker does not cost a query per call.
type authenticator struct {
	store skiplock.TokenStore
	open  bool
	ttl   time.Duration

	mu      sync.Mutex
	countAt time.Time
	count   int
	cache   map[string]cachedToken
}

type cachedToken struct {
	token *skiplock.Token // nil: unknown
	at    time.Time
}

func newAuthenticator(store skiplock.TokenStore, open bool, ttl time.Duration) *authenticator {
	return &authenticator{store: store, open: open, ttl: ttl, cache: map[string]cachedToken{}}
}

var errUnauthenticated = &apiError{status: http.StatusUnauthorized, code: "unauthenticated",
	message: "missing or unknown bearer token (Authorization: Bearer <token>)"}

func (a *authenticator) authenticate(r *http.Request) (*principal, error) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	n, err := a.tokenCount(ctx)
	if err != nil {
		return nil, fmt.Errorf("count tokens: %w", err)
	}
	secret, hasBearer := bearer(r)
	return a.bySecret(ctx, n, secret, hasBearer)
}

// bySecret answers who holds secret, given n tokens exist; has is false
// when the request carried none.
func (a *authenticator) bySecret(ctx context.Context, n int, secret string, hasBearer bool) (*principal, error) {
	if n == 0 {
		if a.open {
			return &principal{role: RoleAdmin, name: "open"}, nil
		}
		return nil, errUnauthenticated
	}
	if !hasBearer {
		return nil, errUnauthenticated
	}
	t, err := a.lookup(ctx, HashToken(secret))
	if err != nil {
		return nil, fmt.Errorf("look up token: %w", err)
	}
	if t == nil {
		return nil, errUnauthenticated
	}
	return &principal{role: t.Role, tenant: t.Tenant, scoped: t.Tenant != "", name: t.Name}, nil
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(secret) == "" {
		return "", false
	}
	return strings.TrimSpace(secret), true
}

func (a *authenticator) tokenCount(ctx context.Context) (int, error) {
	a.mu.Lock()
	if a.ttl > 0 && time.Since(a.countAt) < a.ttl {
		n := a.count
		a.mu.Unlock()
		return n, nil
	}
	a.mu.Unlock()
	n, err := a.store.TokenCount(ctx)
	if errors.Is(err, skiplock.ErrUnsupported) {
		n, err = 0, nil // a driver without a token store holds no tokens
	}
	if err != nil {
		return 0, err
	}
	a.mu.Lock()
	a.count, a.countAt = n, time.Now()
	a.mu.Unlock()
	return n, nil
}

func (a *authenticator) lookup(ctx context.Context, hash string) (*skiplock.Token, error) {
	a.mu.Lock()
	if c, ok := a.cache[hash]; ok && a.ttl > 0 && time.Since(c.at) < a.ttl {
		a.mu.Unlock()
		return c.token, nil
	}
	a.mu.Unlock()
	t, err := a.store.TokenByHash(ctx, hash)
	if errors.Is(err, skiplock.ErrNotFound) || errors.Is(err, skiplock.ErrUnsupported) {
		t, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	if len(a.cache) > 10000 {
		clear(a.cache) // unknown tokens must not grow it without bound
	}
	a.cache[hash] = cachedToken{token: t, at: time.Now()}
	a.mu.Unlock()
	return t, nil
}
