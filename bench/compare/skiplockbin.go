package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// skiplockExe builds, once, the skiplock binary of the tree this command
// was built from, for latency-http: `skiplock serve` takes the posts, and
// `skiplock bench-producer` makes them.
var skiplockExe = sync.OnceValues(func() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("latency-http: cannot tell where this command's source is")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	if _, err := os.Stat(filepath.Join(root, "cmd", "skiplock")); err != nil {
		return "", fmt.Errorf("latency-http: run compare from its source (cd bench/compare && go run .): %w", err)
	}
	dir, err := os.MkdirTemp("", "skiplock-compare-")
	if err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "skiplock")
	cmd := exec.CommandContext(context.Background(), "go", "build", "-o", exe, "./cmd/skiplock")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("latency-http: build skiplock: %v: %s", err, out)
	}
	return exe, nil
})
