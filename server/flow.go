package server

import "github.com/skiplock/skiplock"

// FlowView is a flow rule of a queue as GET /v1/queues shows it: its
// limits (concurrency: running jobs per key; rate per per_seconds: starts
// per key), and their use now.
type FlowView struct {
	Rule        string        `json:"rule"`
	Kind        string        `json:"kind,omitempty"`
	Key         string        `json:"key,omitempty"`
	Concurrency int           `json:"concurrency,omitempty"`
	Rate        int           `json:"rate,omitempty"`
	PerSeconds  float64       `json:"per_seconds,omitempty"`
	Running     int           `json:"running"`
	Keys        int           `json:"keys"`
	Busy        []FlowKeyView `json:"busy"`
}

// FlowKeyView is one key of a rule: its running jobs, and the starts its
// rate allows now (tokens), when the rule has a rate.
type FlowKeyView struct {
	Value   string   `json:"value"`
	Running int      `json:"running"`
	Tokens  *float64 `json:"tokens,omitempty"`
}

func newFlowView(f skiplock.QueueFlow) FlowView {
	v := FlowView{Rule: f.Rule, Kind: f.Kind, Key: f.Key, Concurrency: f.Concurrency, Rate: f.Rate,
		PerSeconds: f.Per.Seconds(), Running: f.Running, Keys: f.Keys, Busy: []FlowKeyView{}}
	for _, k := range f.Busy {
		v.Busy = append(v.Busy, FlowKeyView{Value: k.Value, Running: k.Running, Tokens: k.Tokens})
	}
	return v
}
