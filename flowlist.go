package skiplock

import (
	"cmp"
	"context"
	"slices"

	"github.com/skiplock/skiplock/driver"
)

// FlowRules answers the flow rules in force: Config.Flow, then one per
// flow limit of a kind in the contracts.
func (c *Client) FlowRules() []FlowRule {
	rules := append([]FlowRule(nil), c.config.Flow...)
	set := c.contractSet()
	if !set.HasFlow() {
		return rules
	}
	for _, info := range set.Kinds() {
		if info.Concurrency != nil || info.RateLimit != nil {
			rules = append(rules, c.flowRules(info.Kind)[len(c.config.Flow):]...)
		}
	}
	return rules
}

// withFlow fills in each queue's flow rules and their use.
func (c *Client) withFlow(ctx context.Context, queues []QueueInfo) ([]QueueInfo, error) {
	rules := c.FlowRules()
	if len(rules) == 0 {
		return queues, nil
	}
	store, err := driver.As[driver.FlowStore](c.driver)
	if err != nil {
		return nil, err
	}
	usage, err := store.FlowUsage(ctx)
	if err != nil {
		return nil, err
	}
	byRule := map[string][]driver.FlowUse{}
	for _, u := range usage {
		rule, _ := driver.SplitFlowKey(u.Key)
		byRule[rule] = append(byRule[rule], u)
	}
	for i := range queues {
		for _, r := range rules {
			if r.Queue == "" && r.Kind != "" && !c.kindInQueue(r.Kind, queues[i].Name) || r.Queue != "" && r.Queue != queues[i].Name {
				continue
			}
			queues[i].Flow = append(queues[i].Flow, queueFlow(r, byRule[r.Name]))
		}
	}
	return queues, nil
}

// kindInQueue reports whether a kind-wide rule is shown under queue: the
// kind's contract queue when it has one, else every queue.
func (c *Client) kindInQueue(kind, queue string) bool {
	if k, ok := c.contractSet().Kind(kind); ok {
		return k.Queue == queue
	}
	return true
}

// queueFlow sums the use of a rule's keys: a key's slots and its bucket
// are two rows of usage.
func queueFlow(r FlowRule, usage []driver.FlowUse) driver.QueueFlow {
	qf := driver.QueueFlow{Rule: r.Name, Kind: r.Kind, Key: r.Key, Concurrency: r.Concurrency, Rate: r.Rate, Per: r.Per}
	keys := map[string]*driver.FlowKeyUse{}
	for _, u := range usage {
		_, v := driver.SplitFlowKey(u.Key)
		k := keys[v]
		if k == nil {
			k = &driver.FlowKeyUse{Value: v}
			keys[v] = k
		}
		if u.Rated {
			t := u.Tokens
			k.Tokens = &t
		} else {
			k.Running = u.Running
			qf.Running += u.Running
		}
	}
	qf.Keys = len(keys)
	for _, k := range keys {
		qf.Busy = append(qf.Busy, *k)
	}
	// Busiest first: most running, then fewest tokens left.
	slices.SortFunc(qf.Busy, func(a, b driver.FlowKeyUse) int {
		return cmp.Or(cmp.Compare(b.Running, a.Running), cmp.Compare(tokensOf(a), tokensOf(b)), cmp.Compare(a.Value, b.Value))
	})
	if len(qf.Busy) > driver.MaxBusyKeys {
		qf.Busy = qf.Busy[:driver.MaxBusyKeys]
	}
	return qf
}

func tokensOf(k driver.FlowKeyUse) float64 {
	if k.Tokens == nil {
		return 0
	}
	return *k.Tokens
}

// QueueFlow is a flow rule of a queue and its use (QueueInfo.Flow).
type QueueFlow = driver.QueueFlow

// FlowKeyUse is one key of a flow rule and its use (QueueFlow.Busy).
type FlowKeyUse = driver.FlowKeyUse
