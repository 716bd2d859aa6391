package main

import (
	"runtime/debug"
	"testing"
)

// TestServeGCPercent: serve collects at serveGCPercent unless GOGC is set,
// which then stands.
func TestServeGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)

	t.Setenv("GOGC", "")
	serveGC()
	if got := debug.SetGCPercent(123); got != serveGCPercent {
		t.Fatalf("without GOGC serve collects at %d%%, want %d%%", got, serveGCPercent)
	}
	t.Setenv("GOGC", "50")
	serveGC()
	if got := debug.SetGCPercent(100); got != 123 {
		t.Fatalf("with GOGC set serve changed the percent to %d", got)
	}
}
