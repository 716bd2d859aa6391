package skiplock

import (
	"slices"
	"strings"
	"time"

	"github.com/skiplock/skiplock/internal/input"
)

// checkListFilters refuses filters a listing cannot answer, naming the
// field: an empty tag, a metadata or payload key a JSON path cannot name
// (checkJSONFilters), a range that ends before it starts, an idempotency
// key no insert would take, error texts no database compares.
func checkListFilters(p *JobListParams) error {
	if err := input.CheckText("idempotency_key", p.IdempotencyKey, input.MaxKeyBytes); err != nil {
		return inputError(err)
	}
	for i, t := range p.Tags {
		if t == "" {
			return invalid("tags", "tag %d is empty", i+1)
		}
	}
	if err := checkErrorFilters(p.ErrorType, p.ErrorMessage); err != nil {
		return err
	}
	if err := checkJSONFilters(p.Metadata, p.Payload); err != nil {
		return err
	}
	if err := checkRange("created", p.CreatedAfter, p.CreatedBefore); err != nil {
		return err
	}
	return checkRange("finished", p.FinishedAfter, p.FinishedBefore)
}

func checkRange(field string, after, before time.Time) error {
	if !after.IsZero() && !before.IsZero() && !after.Before(before) {
		return invalid(field+"_before", "%s must be after %s_after (%s)", before.Format(time.RFC3339Nano),
			field, after.Format(time.RFC3339Nano))
	}
	return nil
}

// checkErrorFilters refuses an error type or message filter no database
// compares (a NUL, invalid UTF-8) or longer than any key.
func checkErrorFilters(errorType, errorMessage string) error {
	if err := input.CheckText("error_type", errorType, input.MaxKeyBytes); err != nil {
		return inputError(err)
	}
	return inputError(input.CheckText("error_message", errorMessage, input.MaxKeyBytes))
}

// checkJSONFilters refuses metadata and payload keys that SQLite's quoted
// JSON paths cannot name: an empty key or one with '"'. A payload key a.b
// names the key b inside a, so none of its parts may be empty, and no key
// may name a place inside another's value (a and a.b).
func checkJSONFilters(metadata, payload map[string]any) error {
	for k := range metadata {
		if err := input.CheckText("metadata", k, input.MaxKeyBytes); err != nil {
			return inputError(err)
		}
		if k == "" || strings.ContainsRune(k, '"') {
			return invalid("metadata", "key %q: must be non-empty and without '\"'", k)
		}
	}
	for k := range payload {
		if err := input.CheckText("payload", k, input.MaxKeyBytes); err != nil {
			return inputError(err)
		}
		if strings.ContainsRune(k, '"') || slices.Contains(strings.Split(k, "."), "") {
			return invalid("payload", "key %q: must be non-empty, without '\"', its dotted parts non-empty", k)
		}
		for o := range payload {
			if strings.HasPrefix(k, o+".") {
				return invalid("payload", "key %q is inside key %q's value: give one of them", k, o)
			}
		}
	}
	return nil
}
