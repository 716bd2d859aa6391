package vault

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLibraryLeavesParquetOut: the skiplock library does not import this
// package, Parquet or an S3 client; a program that uses the queue alone
// does not build them.
func TestLibraryLeavesParquetOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/skiplock/skiplock").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/skiplock/skiplock/vault", "github.com/parquet-go/", "github.com/minio/"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("the library imports %s", dep)
			}
		}
	}
}
