package main

import (
	"maps"
	"slices"

	"github.com/skiplock/skiplock"
)

// fairnessConfig is a queue's entry under `fairness:` in skiplock.yaml;
// an entry shares the queue's claims between its tenants:
//
//	fairness:
//	  ingest: {weights: {acme: 3}}
//	  default: {}
type fairnessConfig struct {
	Weights map[string]int `yaml:"weights"`
}

// fairness turns the file's fairness entries into the client's; an error
// names the queue and the tenant.
func fairness(entries map[string]fairnessConfig) (map[string]skiplock.Fairness, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	out := make(map[string]skiplock.Fairness, len(entries))
	for _, queue := range slices.Sorted(maps.Keys(entries)) {
		if queue == "" {
			return nil, usagef("config file: fairness: a queue name must not be empty")
		}
		e := entries[queue]
		for _, tenant := range slices.Sorted(maps.Keys(e.Weights)) {
			if w := e.Weights[tenant]; w < 1 || w > skiplock.MaxTenantWeight {
				return nil, usagef("config file: fairness.%s.weights.%s: must be between 1 and %d, got %d",
					queue, tenant, skiplock.MaxTenantWeight, w)
			}
		}
		out[queue] = skiplock.Fairness{Weights: e.Weights}
	}
	return out, nil
}
