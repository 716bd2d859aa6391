package main

import (
	"bytes"
	"os"
	"testing"
)

// TestForwardersAreCurrent fails when forward_gen.go is not what the
// stores of package driver generate: run `go generate ./internal/dbwatch`.
func TestForwardersAreCurrent(t *testing.T) {
	want, err := generate("../../../driver")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../forward_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/dbwatch/forward_gen.go is stale: run `go generate ./internal/dbwatch`")
	}
}
