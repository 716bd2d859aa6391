package skiplock

import (
	"encoding/json"
	"time"

	"github.com/skiplock/skiplock/contract"
)

// resolved is what the contract and the defaults decided for a job.
type resolved = contract.Resolved

// resolve validates a job against its kind's contract (the set in force)
// and fills in its defaults. Without contracts the built-in defaults apply.
func (c *Client) resolve(kind string, payload json.RawMessage, opts *InsertOpts) (resolved, error) {
	r, err := c.contractSet().Apply(contract.Spec{Kind: kind, Op: opts.Op, Queue: opts.Queue, Tenant: opts.Tenant,
		IdempotencyKey: opts.IdempotencyKey, Priority: opts.Priority, MaxRetries: opts.MaxRetries, Payload: payload})
	if err != nil {
		return resolved{}, err
	}
	return r, nil
}

// Contracts answers the contracts this client enforces (nil when none): the
// stored set once LoadContracts (or Start, or an insert) has read it.
func (c *Client) Contracts() *contract.Set { return c.contractSet() }

// kindPolicy is how jobs of a kind run: the worker's options win, then the
// kind's contract, then the client's configuration.
type kindPolicy struct {
	lease, timeout time.Duration
	backoff        func(retry int) time.Duration
}

func (c *Client) policyOf(kind string, opts WorkerOpts) kindPolicy {
	p := kindPolicy{lease: c.config.Lease, timeout: c.config.JobTimeout, backoff: c.config.Backoff}
	if k, ok := c.contractSet().Kind(kind); ok {
		p.lease, p.backoff = k.Lease, k.Backoff.Next
		if k.Timeout > 0 {
			p.timeout = k.Timeout
		}
	}
	if opts.Lease > 0 {
		p.lease = opts.Lease
	}
	if opts.Timeout > 0 {
		p.timeout = opts.Timeout
	}
	if opts.Backoff != nil {
		p.backoff = opts.Backoff
	}
	return p
}

// backoffsOfKinds answers the wait before retry `retry` of a kind that has
// no backoff of its own, and of each kind of the contracts and the workers,
// as a statement that fails a job without reading it takes them.
func (c *Client) backoffsOfKinds(retry int) (time.Duration, []string, []time.Duration) {
	kinds := c.knownKinds()
	waits := make([]time.Duration, len(kinds))
	for i, kind := range kinds {
		waits[i] = c.policyOf(kind, WorkerOpts{}).backoff(retry)
	}
	return c.config.Backoff(retry), kinds, waits
}
