package skiplock

import (
	"strings"
	"time"

	"github.com/skiplock/skiplock/internal/input"
)

// checkListFilters refuses filters a listing cannot answer, naming the
// field: an empty tag, a metadata key that is empty or holds '"' (SQLite
// reads keys through a quoted JSON path), a range that ends before it
// starts, an idempotency key no insert would take.
func checkListFilters(p *JobListParams) error {
	if err := input.CheckText("idempotency_key", p.IdempotencyKey, input.MaxKeyBytes); err != nil {
		return inputError(err)
	}
	for i, t := range p.Tags {
		if t == "" {
			return invalid("tags", "tag %d is empty", i+1)
		}
	}
	for k := range p.Metadata {
		if k == "" || strings.ContainsRune(k, '"') {
			return invalid("metadata", "key %q: must be non-empty and without '\"'", k)
		}
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
