package driver

import (
	"context"
	"encoding/json"
	"time"
)

// StoredContracts is one applied version of the contract set.
type StoredContracts struct {
	Version int
	// Source is the contract document as applied (YAML or JSON).
	Source []byte
	// Digest is the SHA-256 of Source in hex.
	Digest string
	Strict bool
	// Kinds holds each kind's settings by name (GET /v1/kinds's entries),
	// readable from SQL.
	Kinds json.RawMessage
	// Defaults holds the settings of kinds the set does not declare, for
	// skiplock_enqueue; a driver without SQL enqueue need not store it.
	Defaults  json.RawMessage
	AppliedAt time.Time
}

// ContractStore keeps the versions of the contract set.
type ContractStore interface {
	// ContractsPut stores c as the next version and answers it.
	ContractsPut(ctx context.Context, c *StoredContracts) (*StoredContracts, error)
	// ContractsCurrent answers the newest version; ErrNotFound when none.
	//skiplock:read
	ContractsCurrent(ctx context.Context) (*StoredContracts, error)
}
