package skiplock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver"
)

// ContractsWin says which contract set a client enforces when its
// Config.Contracts differs from the set stored in the database.
type ContractsWin string

const (
	// ContractsRefuse (the default) refuses to run with a set that differs
	// from the stored one: Start and inserts answer ErrContractsDiffer.
	ContractsRefuse ContractsWin = ""
	// ContractsStoredWins enforces the stored set and ignores the config's.
	ContractsStoredWins ContractsWin = "stored"
	// ContractsConfigWins enforces the config's set in this client only.
	ContractsConfigWins ContractsWin = "config"
)

// ErrContractsDiffer: Config.Contracts is not the stored contract set, and
// Config.ContractsWin does not say which wins.
var ErrContractsDiffer = errors.New("contracts differ from the set stored in the database")

// ContractsRefresh is how long a client trusts the stored contract set it
// read before it looks for a newer version.
const ContractsRefresh = 5 * time.Second

// StoredContracts is one applied version of the contract set.
type StoredContracts = driver.StoredContracts

// contractState is the set a client enforces and when it last read the
// stored one.
type contractState struct {
	set atomic.Pointer[contract.Set]
	// goodUntil (unix ns) lets inserts pass without the lock while the
	// set read last is fresh and in force.
	goodUntil atomic.Int64
	mu        sync.Mutex
	readAt    time.Time
	version   int
	checked   bool
	stateErr  error
}

// contractSet answers the set this client enforces now (nil: none).
func (c *Client) contractSet() *contract.Set { return c.contracts.set.Load() }

// ContractsApply stores set as the next version of the contract set, which
// every client, server and command line on the database then enforces
// (within ContractsRefresh); this client enforces it at once.
func (c *Client) ContractsApply(ctx context.Context, set *contract.Set) (*StoredContracts, error) {
	if set == nil {
		return nil, invalid("contracts", "must not be nil")
	}
	kinds, err := sqlKinds(set)
	if err != nil {
		return nil, err
	}
	defaults, err := json.Marshal(set.Defaults())
	if err != nil {
		return nil, err
	}
	// The set in force applied again (a deploy that applies its file each
	// time) stores no new version: the versions would pile up.
	stored, err := c.driver.ContractsCurrent(ctx)
	if err != nil || stored.Digest != set.Digest() || stored.Strict != set.Strict ||
		!sameJSON(stored.Kinds, kinds) || (len(stored.Defaults) > 0 && !sameJSON(stored.Defaults, defaults)) {
		stored, err = c.driver.ContractsPut(ctx, &driver.StoredContracts{Source: set.Source(), Digest: set.Digest(),
			Strict: set.Strict, Kinds: kinds, Defaults: defaults})
	}
	if err != nil {
		return nil, fmt.Errorf("store contracts: %w", err)
	}
	c.contracts.mu.Lock()
	defer c.contracts.mu.Unlock()
	c.contracts.set.Store(set)
	c.contracts.readAt, c.contracts.version, c.contracts.checked, c.contracts.stateErr = time.Now(), stored.Version, true, nil
	c.contracts.goodUntil.Store(c.contracts.readAt.Add(ContractsRefresh).UnixNano())
	return stored, nil
}

// sameJSON tells whether two JSON documents hold the same value (a
// database may store an object's keys in another order).
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// ContractsStored answers the newest stored version; ErrNotFound when none
// was applied.
func (c *Client) ContractsStored(ctx context.Context) (*StoredContracts, error) {
	return c.driver.ContractsCurrent(ctx)
}

// LoadContracts settles the contract set this client enforces: the stored
// one, or Config.Contracts when none is stored. When both exist and differ
// it answers ErrContractsDiffer unless Config.ContractsWin says which wins.
// Start and every insert call it; a newer stored version is read once
// ContractsRefresh has passed.
func (c *Client) LoadContracts(ctx context.Context) error { return c.loadContracts(ctx, false) }

// RefreshContracts is LoadContracts that reads the stored set now, however
// fresh the one read last.
func (c *Client) RefreshContracts(ctx context.Context) error { return c.loadContracts(ctx, true) }

func (c *Client) loadContracts(ctx context.Context, now bool) error {
	s := &c.contracts
	if !now && time.Now().UnixNano() < s.goodUntil.Load() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if now {
		s.goodUntil.Store(0)
		s.readAt = time.Time{}
	}
	defer func() {
		if s.stateErr == nil && s.checked {
			s.goodUntil.Store(s.readAt.Add(ContractsRefresh).UnixNano())
		}
	}()
	if s.checked && time.Since(s.readAt) < ContractsRefresh {
		return s.stateErr
	}
	stored, err := c.driver.ContractsCurrent(ctx)
	// No stored set, or a driver that stores none: the process's own holds.
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrUnsupported) {
		s.set.Store(c.config.Contracts)
		s.readAt, s.version, s.checked, s.stateErr = time.Now(), 0, true, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the stored contracts: %w", err)
	}
	if s.checked && stored.Version == s.version {
		s.readAt = time.Now()
		return s.stateErr
	}
	set, err := contract.Parse(stored.Source)
	if err != nil {
		return fmt.Errorf("stored contracts version %d: %w", stored.Version, err)
	}
	s.readAt, s.version, s.checked, s.stateErr = time.Now(), stored.Version, true, nil
	cfg := c.config.Contracts
	switch {
	case cfg == nil || cfg.Digest() == stored.Digest || c.config.ContractsWin == ContractsStoredWins:
		s.set.Store(set)
	case c.config.ContractsWin == ContractsConfigWins:
		c.log.Warn("contracts differ from the stored set; this client enforces its own", "stored_version", stored.Version)
		s.set.Store(cfg)
	default:
		s.stateErr = fmt.Errorf("%w (version %d, applied %s): apply this file, or say which wins",
			ErrContractsDiffer, stored.Version, stored.AppliedAt.Format(time.RFC3339))
	}
	return s.stateErr
}

// sqlKindInfo is a kind's settings as stored, readable from SQL
// (skiplock_enqueue reads them).
type sqlKindInfo struct {
	contract.KindInfo
	WindowSeconds float64 `json:"window_seconds"`
	PayloadSchema bool    `json:"payload_schema"`
	SQLEnqueue    bool    `json:"sql_enqueue"`
}

// sqlKinds answers the kinds of set by name, as stored for SQL.
func sqlKinds(set *contract.Set) (json.RawMessage, error) {
	out := map[string]sqlKindInfo{}
	for _, info := range set.Kinds() {
		k, _ := set.Kind(info.Kind)
		si := sqlKindInfo{KindInfo: info, PayloadSchema: k.HasSchema(), SQLEnqueue: k.SQLEnqueue}
		if k.Unique != nil {
			si.WindowSeconds = k.Unique.Window.Seconds()
		}
		out[info.Kind] = si
	}
	return json.Marshal(out)
}

// ContractsVersion answers the stored version this client read last (0:
// none stored, or not read yet).
func (c *Client) ContractsVersion() int {
	c.contracts.mu.Lock()
	defer c.contracts.mu.Unlock()
	return c.contracts.version
}
