package skiplock_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// libraryPackages are what a library user imports: the client and the
// drivers (and, through them, the driver contract and contracts).
var libraryPackages = []string{".", "./driver/pgdriver", "./driver/sqlitedriver", "./contract"}

// toolModules are the dependencies of the command line, the server, the
// vault and the benchmarks. One go.mod holds them all; the package graph
// keeps them away from a library user's build.
var toolModules = []string{
	"github.com/spf13/cobra", "github.com/spf13/pflag", "github.com/mattn/go-isatty",
	"github.com/prometheus/", "google.golang.org/protobuf", "google.golang.org/grpc",
	"github.com/parquet-go/", "github.com/apache/arrow", "github.com/xitongsys/parquet-go",
	"github.com/chromedp/", "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters",
	"github.com/aws/", "cloud.google.com/", "github.com/minio/",
}

// TestLibraryStaysSmall fails when a package a library user imports depends
// on a module of the tools (command line, server, Prometheus, Parquet,
// browser tests, telemetry exporters, object stores).
func TestLibraryStaysSmall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list the packages' dependencies")
	}
	args := append([]string{"list", "-deps", "-f", "{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}"}, libraryPackages...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var modules []string
	for line := range strings.Lines(string(out)) {
		pkg, module, _ := strings.Cut(strings.TrimSpace(line), " ")
		if module == "" || module == "github.com/skiplock/skiplock" {
			continue
		}
		if !slices.Contains(modules, module) {
			modules = append(modules, module)
		}
		for _, bad := range toolModules {
			if strings.HasPrefix(module+"/", bad) || strings.HasPrefix(module, bad) {
				t.Errorf("the library depends on %s (module %s), a tool's dependency", pkg, module)
			}
		}
	}
	slices.Sort(modules)
	t.Logf("third-party modules of the library: %d: %s", len(modules), strings.Join(modules, " "))
}
