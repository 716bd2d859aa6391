//go:build race

package examples_test

// raceEnabled builds the example programs with the race detector when the
// tests run with it.
const raceEnabled = true
