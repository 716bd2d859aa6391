package server

import (
	"fmt"
	"testing"
)

// Kinds and queues are names clients choose: past maxLabelPairs pairs, new
// ones count under otherLabel, and those seen before keep their labels.
func TestLabelPairsAreBounded(t *testing.T) {
	var l labelPairs
	for i := range maxLabelPairs {
		if k, q := l.of(fmt.Sprint("k", i), "q"); k != fmt.Sprint("k", i) || q != "q" {
			t.Fatalf("pair %d counted as %s/%s", i, k, q)
		}
	}
	if k, q := l.of("new", "q"); k != otherLabel || q != otherLabel {
		t.Fatalf("pair past the bound counted as %s/%s, want %s", k, q, otherLabel)
	}
	if k, q := l.of("k7", "q"); k != "k7" || q != "q" {
		t.Fatalf("a known pair counted as %s/%s", k, q)
	}
}
