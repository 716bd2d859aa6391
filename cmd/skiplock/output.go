package main

import (
	"encoding/json"
	"io"

	"github.com/skiplock/skiplock"
)

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// jobView is a job as docs/api.md shows it: optional fields are null when unset.
func jobView(j *skiplock.JobRow) *skiplock.JobView {
	return skiplock.NewJobView(j)
}
