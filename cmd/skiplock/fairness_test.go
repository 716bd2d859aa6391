package main

import (
	"testing"
)

func TestFairnessFromConfigFile(t *testing.T) {
	got, err := fairness(map[string]fairnessConfig{"ingest": {Weights: map[string]int{"acme": 3}}, "default": {}})
	if err != nil || len(got) != 2 || got["ingest"].Weights["acme"] != 3 || got["default"].Weights != nil {
		t.Fatalf("fairness: %v, %v", got, err)
	}
	_, err = fairness(map[string]fairnessConfig{"ingest": {Weights: map[string]int{"acme": 0}}})
	if want := "config file: fairness.ingest.weights.acme: must be between 1 and 1000, got 0"; err == nil ||
		err.Error() != want || !isInputError(err) {
		t.Fatalf("weight 0: %v, want %s", err, want)
	}
}
