package skiplock

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/skiplock/skiplock/contract"
)

// kindLeases are the leases of the kinds whose lease is not Config.Lease (a
// contract's or a worker's), in the driver's form: a claim or heartbeat from
// outside gives each job its kind's lease in the same statement, without
// reading the job first. Both are nil when no kind has its own lease, and
// the statements then take the default alone.
type kindLeases struct {
	kinds  []string
	leases []time.Duration
}

// setLeases are the kind leases worked out for one contract set.
type setLeases struct {
	set *contract.Set
	kl  kindLeases
}

// kindLeases answers the kind leases under the contract set in force,
// worked out again when a new stored version comes into force: a claim or
// heartbeat from outside follows it without a restart.
func (c *Client) kindLeases() kindLeases {
	set := c.contractSet()
	if sl := c.leases.Load(); sl != nil && sl.set == set {
		return sl.kl
	}
	sl := &setLeases{set: set, kl: c.leasesOfKinds(set)}
	c.leases.Store(sl)
	return sl.kl
}

// leasesOfKinds answers the leases of the kinds of set and of the workers,
// each with its policy's lease (the worker's option, then the contract's).
func (c *Client) leasesOfKinds(set *contract.Set) kindLeases {
	var kl kindLeases
	for _, kind := range c.kindsOf(set) {
		var opts WorkerOpts
		if w := c.config.Workers.byKind[kind]; w != nil {
			opts = w.opts
		}
		if lease := c.policyOf(kind, opts).lease; lease != c.config.Lease {
			kl.kinds, kl.leases = append(kl.kinds, kind), append(kl.leases, lease)
		}
	}
	return kl
}

// knownKinds answers the kinds of the contracts in force and of the workers.
func (c *Client) knownKinds() []string { return c.kindsOf(c.contractSet()) }

// kindsOf answers the kinds of set and of the workers.
func (c *Client) kindsOf(set *contract.Set) []string {
	var kinds []string
	for _, k := range set.Kinds() {
		kinds = append(kinds, k.Kind)
	}
	for kind := range c.config.Workers.byKind {
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	return kinds
}

// heartbeatWithinLeases refuses a HeartbeatInterval that is not shorter
// than the lease a contract gives a kind this client works (NewClient
// checked Lease and the workers' own).
func (c *Client) heartbeatWithinLeases() error {
	for _, kind := range slices.Sorted(maps.Keys(c.policies)) {
		what := fmt.Sprintf("the lease of kind %q", kind)
		if err := c.config.heartbeatWithin(what, c.policies[kind].lease); err != nil {
			return err
		}
	}
	return nil
}

// settlePolicies settles each worker's kind's policy by the contracts in
// force; Start calls it before any job runs.
func (c *Client) settlePolicies() {
	c.policies = make(map[string]kindPolicy, len(c.config.Workers.byKind))
	for kind, w := range c.config.Workers.byKind {
		c.policies[kind] = c.policyOf(kind, w.opts)
	}
}
