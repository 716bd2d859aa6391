package skiplock

import (
	"bytes"
	"encoding/json"
	"time"
)

// resolved is what the contract and the defaults decided for a job.
type resolved struct {
	Queue          string
	Priority       int
	MaxRetries     int
	IdempotencyKey string
	UniquePolicy   string
	UniqueWindow   time.Duration
}

// resolve applies the defaults to a job's options.
func (c *Client) resolve(kind string, payload json.RawMessage, opts *InsertOpts) (resolved, error) {
	if t := bytes.TrimSpace(payload); len(t) == 0 || t[0] != '{' {
		return resolved{}, invalid("payload", "must be a JSON object")
	}
	r := resolved{Queue: opts.Queue, Priority: DefaultPriority, MaxRetries: DefaultMaxRetries,
		IdempotencyKey: opts.IdempotencyKey}
	if r.Queue == "" {
		r.Queue = DefaultQueue
	}
	if opts.Priority != nil {
		r.Priority = *opts.Priority
	}
	if opts.MaxRetries != nil {
		r.MaxRetries = *opts.MaxRetries
	}
	if r.IdempotencyKey != "" {
		r.UniquePolicy = "active"
	}
	return r, nil
}
