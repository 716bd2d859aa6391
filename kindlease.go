package skiplock

import (
	"slices"
	"time"
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

// leasesOfKinds settles the kind leases once, at NewClient: the kinds of
// the contracts and of the workers, each with its policy's lease.
func (c *Client) leasesOfKinds() kindLeases {
	var kl kindLeases
	for _, kind := range c.knownKinds() {
		lease := c.policyOf(kind, WorkerOpts{}).lease
		if p, ok := c.policies[kind]; ok {
			lease = p.lease
		}
		if lease != c.config.Lease {
			kl.kinds, kl.leases = append(kl.kinds, kind), append(kl.leases, lease)
		}
	}
	return kl
}

// knownKinds answers the kinds of the contracts and of the workers.
func (c *Client) knownKinds() []string {
	var kinds []string
	for _, k := range c.contractSet().Kinds() {
		kinds = append(kinds, k.Kind)
	}
	for kind := range c.config.Workers.byKind {
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
	}
	return kinds
}
