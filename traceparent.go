package skiplock

import "encoding/json"

// TraceparentKey is the metadata key that carries a job's W3C trace
// context; the job object shows it as its `traceparent` field.
const TraceparentKey = "traceparent"

// ValidTraceparent reports whether s is a W3C traceparent:
// version-traceid-parentid-flags in lower-case hex, version not ff, ids not
// all zero.
func ValidTraceparent(s string) bool {
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

// WithTraceparent answers meta with its traceparent set to tp (unless it
// has one and overwrite is false). field names the input at fault.
func WithTraceparent(field string, meta json.RawMessage, tp string, overwrite bool) (json.RawMessage, error) {
	job := InsertJob{Metadata: meta}
	if !overwrite {
		var have string
		if ok, _ := job.MetadataValue(TraceparentKey, &have); ok {
			return meta, nil
		}
	}
	if err := job.SetMetadata(TraceparentKey, tp); err != nil {
		return nil, invalid(field, "must be a JSON object to carry a traceparent")
	}
	return job.Metadata, nil
}
