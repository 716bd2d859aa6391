package bench

import (
	"fmt"
	"strconv"
	"time"

	"github.com/skiplock/skiplock"
)

// FlowRuleName names the bench's flow rule.
const FlowRuleName = "bench"

// DefaultFlowConcurrency is the concurrency of each key under --flow-keys:
// high enough that the limit never holds the run back, so that the run
// measures what the limit costs.
const DefaultFlowConcurrency = 1000

// flowRules are the bench's flow rules: with --flow-keys, the bench jobs
// spread over that many concurrency keys (payload.k), each limited to
// --flow-concurrency running jobs; --flow-rate adds a rate per key.
func (o Options) flowRules() []skiplock.FlowRule {
	if o.FlowKeys == 0 {
		return nil
	}
	r := skiplock.FlowRule{Name: FlowRuleName, Queue: Queue, Key: "payload.k", Concurrency: o.FlowConcurrency}
	if r.Concurrency == 0 && o.FlowRate == 0 {
		r.Concurrency = DefaultFlowConcurrency
	}
	if o.FlowRate > 0 {
		r.Rate, r.Per = o.FlowRate, time.Second
	}
	return []skiplock.FlowRule{r}
}

func (o Options) validateFlow() error {
	switch {
	case o.FlowKeys < 0 || o.FlowKeys > 1_000_000:
		return fmt.Errorf("--flow-keys: must be between 1 and 1000000, got %d", o.FlowKeys)
	case o.FlowConcurrency < 0 || o.FlowRate < 0:
		return fmt.Errorf("--flow-concurrency and --flow-rate must not be negative")
	case (o.FlowConcurrency > 0 || o.FlowRate > 0) && o.FlowKeys == 0:
		return fmt.Errorf("--flow-concurrency and --flow-rate need --flow-keys")
	case o.FlowKeys > 0 && o.Mode != "e2e" && o.Mode != "drain":
		return fmt.Errorf("--flow-keys applies to --mode e2e and drain only")
	case o.FlowKeys > 0 && o.Procs > 0:
		return fmt.Errorf("--flow-keys and --procs do not go together")
	}
	return nil
}

// flowKey is the key of the n-th job inserted under --flow-keys.
func flowKey(n, keys int) string { return "k" + strconv.Itoa(n%keys) }
