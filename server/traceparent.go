package server

import (
	"net/http"

	"github.com/skiplock/skiplock"
)

// headerTraceparent gives the request's traceparent header to the jobs
// that carry none of their own. An invalid header is ignored, as W3C Trace
// Context asks of a receiver.
func headerTraceparent(r *http.Request, jobs []skiplock.InsertManyParams) error {
	tp := r.Header.Get("traceparent")
	if tp == "" || !skiplock.ValidTraceparent(tp) {
		return nil
	}
	for _, j := range jobs {
		meta, err := skiplock.WithTraceparent("metadata", j.Opts.Metadata, tp, false)
		if err != nil {
			return err
		}
		j.Opts.Metadata = meta
	}
	return nil
}
