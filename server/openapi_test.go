package server_test

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestOpenAPIMatchesRoutes: every path and method of docs/openapi.yaml is
// routed by the server, and every route is in the file.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	methods := map[string]bool{"get": true, "put": true, "post": true, "delete": true, "patch": true, "head": true, "options": true}
	var inFile []string
	for path, ops := range doc.Paths {
		for m := range ops {
			if methods[m] {
				inFile = append(inFile, strings.ToUpper(m)+" "+path)
			}
		}
	}
	b := setup(t, databases[len(databases)-1], nil)
	// Route patterns and OpenAPI paths name their parameters alike.
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	norm := func(s string) string { return param.ReplaceAllString(s, "{}") }
	routes := map[string]bool{}
	for _, r := range b.srv.Routes() {
		routes[norm(r)] = true
	}
	documented := map[string]bool{}
	for _, r := range inFile {
		documented[norm(r)] = true
		if !routes[norm(r)] {
			t.Errorf("docs/openapi.yaml has %s; the server does not route it", r)
		}
	}
	var missing []string
	for _, r := range b.srv.Routes() {
		if !documented[norm(r)] {
			missing = append(missing, r)
		}
	}
	sort.Strings(missing)
	for _, r := range missing {
		t.Errorf("the server routes %s; docs/openapi.yaml lacks it", r)
	}
}
