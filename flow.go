package skiplock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/skiplock/skiplock/contract"
	"github.com/skiplock/skiplock/driver"
)

// DefaultFlowPollInterval is how often a client claims from a queue under
// flow limits when nothing wakes it: a token that refills or a slot freed
// in another process sends no wake-up.
const DefaultFlowPollInterval = 100 * time.Millisecond

// FlowRule limits how many jobs run at once, or how fast jobs start, among
// the jobs it picks, across every process that shares the database
// (docs/flow-control.md). A job held back stays pending, its attempt
// unspent, until the limit lets it start.
type FlowRule struct {
	// Name names the rule in listings (Client.QueueList, GET /v1/queues);
	// unique among the rules.
	Name string
	// Queue and Kind pick the jobs the rule applies to; empty matches any.
	// At least one is set.
	Queue, Kind string
	// Key is the field whose value partitions the limit: "tenant",
	// "queue", "kind", "op" or "payload.<property>[.<property>…]". Each
	// value has its own limit; empty, every job the rule picks shares one.
	Key string
	// Concurrency, when set, lets at most this many jobs per key run at
	// once (a concurrency key; a per-tenant cap is Key "tenant").
	Concurrency int
	// Rate, when set, lets at most Rate jobs per key start per Per: a
	// token bucket of Rate tokens refilled at Rate per Per.
	Rate int
	Per  time.Duration
}

func (r FlowRule) picks(queue, kind string) bool {
	return (r.Queue == "" || r.Queue == queue) && (r.Kind == "" || r.Kind == kind)
}

// CheckFlowRules checks rules as NewClient does (Config.Flow); an error
// names the rule and the field.
func CheckFlowRules(rules []FlowRule) error { return validateFlow(rules) }

// validateFlow checks the rules; errors name the field.
func validateFlow(rules []FlowRule) error {
	names := map[string]bool{}
	for i, r := range rules {
		at := fmt.Sprintf("config: Flow[%d]", i)
		switch {
		case r.Name == "" || len(r.Name) > 200 || strings.Contains(r.Name, driver.FlowKeySep):
			return fmt.Errorf("%s.Name: must be 1 to 200 characters without control characters", at)
		case names[r.Name]:
			return fmt.Errorf("%s.Name: %q names two rules", at, r.Name)
		case r.Queue == "" && r.Kind == "":
			return fmt.Errorf("%s: set Queue or Kind (or both): the jobs the rule applies to", at)
		case r.Concurrency < 0 || r.Concurrency > 1_000_000:
			return fmt.Errorf("%s.Concurrency: must be between 1 and 1000000, got %d", at, r.Concurrency)
		case r.Rate < 0 || r.Rate > 1_000_000:
			return fmt.Errorf("%s.Rate: must be between 1 and 1000000, got %d", at, r.Rate)
		case r.Concurrency == 0 && r.Rate == 0:
			return fmt.Errorf("%s: set Concurrency or Rate (or both)", at)
		case r.Rate > 0 && r.Per <= 0:
			return fmt.Errorf("%s.Per: must be a positive interval, got %s", at, r.Per)
		case r.Rate == 0 && r.Per != 0:
			return fmt.Errorf("%s.Per: only used with Rate", at)
		}
		if r.Key != "" {
			if msg := contract.CheckFlowRef(r.Key); msg != "" {
				return fmt.Errorf("%s.Key: %s", at, msg)
			}
		}
		names[r.Name] = true
	}
	return nil
}

// flowRules are the rules in force for a job of kind: the config's, then
// the kind's contract's (named "kind:<kind>" and "kind:<kind>:rate").
func (c *Client) flowRules(kind string) []FlowRule {
	rules := c.config.Flow
	k, ok := c.contractSet().Kind(kind)
	if !ok || k.Concurrency == nil && k.RateLimit == nil {
		return rules
	}
	rules = append([]FlowRule(nil), rules...)
	if f := k.Concurrency; f != nil {
		rules = append(rules, FlowRule{Name: "kind:" + kind, Kind: kind, Key: f.Key, Concurrency: f.Limit})
	}
	if f := k.RateLimit; f != nil {
		rules = append(rules, FlowRule{Name: "kind:" + kind + ":rate", Kind: kind, Key: f.Key, Rate: f.Limit, Per: f.Per})
	}
	return rules
}

// flowKeys computes p's flow keys: the first rule that picks it with a
// concurrency limit gives its concurrency key, the first with a rate its
// rate key. Nil when no rule picks it.
func (c *Client) flowKeys(p *driver.InsertParams) (*driver.FlowKeys, error) {
	if len(c.config.Flow) == 0 && !c.contractSet().HasFlow() {
		return nil, nil
	}
	var f driver.FlowKeys
	for _, r := range c.flowRules(p.Kind) {
		if !r.picks(p.Queue, p.Kind) {
			continue
		}
		needC, needR := r.Concurrency > 0 && f.ConcurrencyKey == "", r.Rate > 0 && f.RateKey == ""
		if !needC && !needR {
			continue
		}
		v := ""
		if r.Key != "" {
			var err error
			if v, err = contract.FieldValue(r.Key, p.Kind, p.Tenant, p.Queue, p.Op, p.Payload); err != nil {
				return nil, fmt.Errorf("flow rule %q: %w", r.Name, err)
			}
		}
		if needC {
			f.ConcurrencyKey, f.ConcurrencyLimit = driver.FlowKey(r.Name, v), r.Concurrency
		}
		if needR {
			f.RateKey, f.Burst = driver.FlowKey(r.Name, v), float64(r.Rate)
			f.Rate = float64(r.Rate) / r.Per.Seconds()
		}
	}
	if f.ConcurrencyKey == "" && f.RateKey == "" {
		return nil, nil
	}
	return &f, nil
}

// flowClaims reports whether claims from queue honour flow keys: some rule
// may pick its jobs. Without rules a claim is the plain one.
func (c *Client) flowClaims(queue string) bool {
	for _, r := range c.config.Flow {
		if r.Queue == "" || r.Queue == queue {
			return true
		}
	}
	return c.contractSet().HasFlow()
}

// pollInterval is how often the producer claims when nothing wakes it.
func (p *producer) pollInterval() time.Duration {
	if p.client.flowClaims(p.queue) {
		return min(p.client.config.FetchPollInterval, p.client.config.FlowPollInterval)
	}
	return p.client.config.FetchPollInterval
}

// jobRetry is the driver's JobRetry; under flow rules the job, back from
// the archive (which keeps no keys), gets its keys again in the same
// transaction.
func (c *Client) jobRetry(ctx context.Context, id int64) (*JobRow, error) {
	if len(c.config.Flow) == 0 && !c.contractSet().HasFlow() {
		return c.driver.JobRetry(ctx, id)
	}
	var j *JobRow
	err := c.inTx(ctx, func(tx driver.Executor) error {
		admin, err := driver.As[driver.AdminStore](tx)
		if err != nil {
			return err
		}
		if j, err = admin.JobRetry(ctx, id); err != nil {
			return err
		}
		keys, err := c.flowKeys(&driver.InsertParams{Kind: j.Kind, Op: j.Op, Queue: j.Queue, Tenant: j.Tenant, Payload: j.Payload})
		if err != nil || keys == nil {
			return err
		}
		store, err := driver.As[driver.FlowStore](tx)
		if err != nil {
			return err
		}
		return store.FlowTag(ctx, []int64{j.ID}, []*driver.FlowKeys{keys})
	})
	return j, err
}
