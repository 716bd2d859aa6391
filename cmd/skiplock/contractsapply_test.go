package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIContractsApplyBindsEnqueue: after `contracts apply`, enqueue
// without --contracts is checked by the stored set; a different file exits
// 2 unless --contracts-win says which wins.
func TestCLIContractsApplyBindsEnqueue(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			dir := t.TempDir()
			strict := filepath.Join(dir, "strict.yaml")
			other := filepath.Join(dir, "other.yaml")
			if err := os.WriteFile(strict, []byte("version: 1\nstrict: true\nkinds:\n  file: {queue: ingest}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(other, []byte("version: 1\nkinds:\n  file: {queue: other}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if r := runCLI(t, url, "contracts", "apply", strict); r.code != 0 || !strings.Contains(r.stdout, "version 1 applied") {
				t.Fatalf("apply: %+v", r)
			}
			if r := runCLI(t, url, "enqueue", "fil"); r.code != 2 || !strings.Contains(r.stderr, "strict") {
				t.Fatalf("unknown kind under the stored set: %+v", r)
			}
			if r := runCLI(t, url, "enqueue", "file"); r.code != 0 || !strings.Contains(r.stdout, "queue=ingest") {
				t.Fatalf("enqueue by the stored set: %+v", r)
			}
			r := runCLI(t, url, "enqueue", "file", "--contracts", other)
			if r.code != 2 || !strings.Contains(r.stderr, "--contracts") || !strings.Contains(r.stderr, "version 1") {
				t.Fatalf("a different file: %+v", r)
			}
			if r := runCLI(t, url, "enqueue", "file", "--contracts", other, "--contracts-win", "file"); r.code != 0 || !strings.Contains(r.stdout, "queue=other") {
				t.Fatalf("file wins: %+v", r)
			}
			if r := runCLI(t, url, "enqueue", "file", "--contracts", other, "--contracts-win", "stored"); r.code != 0 || !strings.Contains(r.stdout, "queue=ingest") {
				t.Fatalf("stored wins: %+v", r)
			}
			if r := runCLI(t, url, "enqueue", "file", "--contracts-win", "maybe"); r.code != 2 || !strings.Contains(r.stderr, "--contracts-win") {
				t.Fatalf("bad --contracts-win: %+v", r)
			}
		})
	}
}
