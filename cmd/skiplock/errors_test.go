package main

import (
	"strings"
	"testing"
)

// An error says each piece of context once: no "insert job of kind "x":
// insert job 1 of 1 (kind "x"): …".
func TestCLIErrorsWrapOnce(t *testing.T) {
	t.Parallel()
	for name, open := range cliDatabases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			url := migrated(t, open)
			r := runCLI(t, url, "enqueue", "thumb", "--depends-on", "999")
			wantUsage(t, "missing dependency", r, "999", `"thumb"`)
			if strings.Count(r.stderr, "insert") > 1 || strings.Count(r.stderr, `"thumb"`) > 1 {
				t.Errorf("context said twice: %q", r.stderr)
			}
		})
	}
}
