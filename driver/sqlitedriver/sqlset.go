package sqlitedriver

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

//go:embed queries.sql
var queriesSQL string

// jobColumns is the scan order of scanJob.
var jobColumns = []string{"id", "kind", "op", "queue", "tenant", "state", "priority", "payload", "metadata",
	"tags", "attempt", "max_retries", "run_at", "created_at", "started_at", "finished_at", "updated_at",
	"lease_until", "worker_id", "heartbeat_at", "progress", "progress_message", "checkpoint", "result",
	"errors", "idempotency_key", "depends_on", "workflow_id", "stage", "cancel_requested",
	"run_on_parent_failure"}

// queries maps a statement name to its SQL, expanded once at start-up.
var queries = mustParseQueries(queriesSQL)

var colsMacro = regexp.MustCompile(`\{\{cols(?: (\w+):([^}]*))?\}\}`)

func mustParseQueries(src string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(src, "-- name: ")[1:] {
		name, body, _ := strings.Cut(part, "\n")
		name = strings.TrimSpace(name)
		out[name] = colsMacro.ReplaceAllStringFunc(strings.TrimSpace(body), expandCols)
	}
	return out
}

// expandCols turns {{cols}} or {{cols d: state='x', …}} into a column list.
func expandCols(m string) string {
	sub := colsMacro.FindStringSubmatch(m)
	alias, overrides := sub[1], parseOverrides(sub[2])
	list := make([]string, len(jobColumns))
	for i, c := range jobColumns {
		switch {
		case overrides[c] != "":
			list[i] = overrides[c]
		case alias != "":
			list[i] = alias + "." + c
		default:
			list[i] = c
		}
	}
	return strings.Join(list, ", ")
}

// parseOverrides splits "a=x, b=f(y, z)" at top-level commas.
func parseOverrides(s string) map[string]string {
	out := map[string]string{}
	depth, start := 0, 0
	inQuote := false
	flush := func(end int) {
		item := strings.TrimSpace(s[start:end])
		if item == "" {
			return
		}
		col, expr, ok := strings.Cut(item, "=")
		if !ok {
			panic(fmt.Sprintf("sqlitedriver: bad column override %q", item))
		}
		out[strings.TrimSpace(col)] = strings.TrimSpace(expr)
	}
	for i, r := range s {
		switch {
		case r == '\'':
			inQuote = !inQuote
		case inQuote:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			flush(i)
			start = i + 1
		}
	}
	flush(len(s))
	return out
}

func q(name string) string {
	s, ok := queries[name]
	if !ok {
		panic("sqlitedriver: no statement named " + name)
	}
	return s
}
