package server

import (
	"encoding/json"
	"net/http"

	"github.com/skiplock/skiplock"
)

// traceparentKey is the metadata key that carries a job's W3C trace
// context; the job object shows it as its `traceparent` field.
const traceparentKey = "traceparent"

// validTraceparent reports whether s is a W3C traceparent:
// version-traceid-parentid-flags in lower-case hex, version not ff, ids not
// all zero.
func validTraceparent(s string) bool {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' || s[:2] == "ff" {
		return false
	}
	zeroTrace, zeroParent := true, true
	for i := 0; i < len(s); i++ {
		if i == 2 || i == 35 || i == 52 {
			continue
		}
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
		if c != '0' && i > 2 && i < 35 {
			zeroTrace = false
		}
		if c != '0' && i > 35 && i < 52 {
			zeroParent = false
		}
	}
	return !zeroTrace && !zeroParent
}

// withTraceparent answers meta with its traceparent set to tp (unless it
// has one and overwrite is false). field names the input at fault.
func withTraceparent(field string, meta json.RawMessage, tp string, overwrite bool) (json.RawMessage, error) {
	job := skiplock.InsertJob{Metadata: meta}
	if !overwrite {
		var have string
		if ok, _ := job.MetadataValue(traceparentKey, &have); ok {
			return meta, nil
		}
	}
	if err := job.SetMetadata(traceparentKey, tp); err != nil {
		return nil, badRequest(field, "must be a JSON object to carry a traceparent")
	}
	return job.Metadata, nil
}

// headerTraceparent gives the request's traceparent header to the jobs
// that carry none of their own. An invalid header is ignored, as W3C Trace
// Context asks of a receiver.
func headerTraceparent(r *http.Request, jobs []skiplock.InsertManyParams) error {
	tp := r.Header.Get("traceparent")
	if tp == "" || !validTraceparent(tp) {
		return nil
	}
	for _, j := range jobs {
		meta, err := withTraceparent("metadata", j.Opts.Metadata, tp, false)
		if err != nil {
			return err
		}
		j.Opts.Metadata = meta
	}
	return nil
}
