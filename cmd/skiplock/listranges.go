package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/skiplock/skiplock"
)

// listRanges are jobs list's time bounds, RFC 3339 as the API takes them.
type listRanges struct {
	createdAfter, createdBefore, finishedAfter, finishedBefore string
}

func (r *listRanges) flags(f *pflag.FlagSet) {
	f.StringVar(&r.createdAfter, "created-after", "", "only jobs created at or after this time (RFC 3339)")
	f.StringVar(&r.createdBefore, "created-before", "", "only jobs created before this time (RFC 3339)")
	f.StringVar(&r.finishedAfter, "finished-after", "", "only jobs finished at or after this time (RFC 3339)")
	f.StringVar(&r.finishedBefore, "finished-before", "", "only jobs finished before this time (RFC 3339)")
}

// apply parses the bounds into p; a bad one exits 2 naming its flag.
func (r *listRanges) apply(p *skiplock.JobListParams) error {
	for _, b := range []struct {
		flag, v string
		dst     *time.Time
	}{{"--created-after", r.createdAfter, &p.CreatedAfter}, {"--created-before", r.createdBefore, &p.CreatedBefore},
		{"--finished-after", r.finishedAfter, &p.FinishedAfter}, {"--finished-before", r.finishedBefore, &p.FinishedBefore}} {
		if b.v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, b.v)
		if err != nil {
			return usagef("%s: %q is not an RFC 3339 time (2026-11-21T09:00:00Z)", b.flag, b.v)
		}
		*b.dst = at
	}
	return nil
}
