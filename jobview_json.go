package skiplock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// ViewFields picks fields of a JobView by their JSON names, for answers
// that carry part of each job (a claim's `fields`). The zero value picks
// every field.
type ViewFields uint64

// viewFieldNames are JobView's JSON names in the order it is written.
var viewFieldNames = [...]string{"id", "kind", "op", "queue", "tenant", "state", "priority", "payload", "metadata",
	"tags", "attempt", "max_retries", "run_at", "created_at", "started_at", "finished_at", "updated_at",
	"lease_until", "worker_id", "heartbeat_at", "progress", "progress_message", "checkpoint", "result", "errors",
	"idempotency_key", "depends_on", "workflow_id", "stage", "cancel_requested", "traceparent"}

// Field bits, in viewFieldNames' order.
const (
	vfID ViewFields = 1 << iota
	vfKind
	vfOp
	vfQueue
	vfTenant
	vfState
	vfPriority
	vfPayload
	vfMetadata
	vfTags
	vfAttempt
	vfMaxRetries
	vfRunAt
	vfCreatedAt
	vfStartedAt
	vfFinishedAt
	vfUpdatedAt
	vfLeaseUntil
	vfWorkerID
	vfHeartbeatAt
	vfProgress
	vfProgressMessage
	vfCheckpoint
	vfResult
	vfErrors
	vfIdempotencyKey
	vfDependsOn
	vfWorkflowID
	vfStage
	vfCancelRequested
	vfTraceparent
	vfEnd
)

// ParseViewFields answers the fields named (JSON names of the job object);
// a job's id and attempt always come, as a report needs both. An unknown
// name is an error naming field[i].
func ParseViewFields(field string, names []string) (ViewFields, error) {
	f := vfID | vfAttempt
	for i, n := range names {
		k := viewFieldIndex(n)
		if k < 0 {
			return 0, invalid(fmt.Sprintf("%s[%d]", field, i), "is not a field of a job: %q", n)
		}
		f |= 1 << k
	}
	return f, nil
}

func viewFieldIndex(name string) int {
	for k, n := range viewFieldNames {
		if n == name {
			return k
		}
	}
	return -1
}

// AppendJSON appends v as JSON, the bytes encoding/json writes for it,
// with only the fields f picks (every field when f is zero). It fails
// where encoding/json fails, with its error: on stored JSON that is not
// JSON, or a time outside the years 0–9999.
func (v *JobView) AppendJSON(dst []byte, f ViewFields) ([]byte, error) {
	if f == 0 {
		f = vfEnd - 1
	}
	w := viewWriter{b: append(dst, '{'), f: f}
	w.int(vfID, v.ID)
	w.str(vfKind, v.Kind)
	w.optStr(vfOp, v.Op)
	w.str(vfQueue, v.Queue)
	w.str(vfTenant, v.Tenant)
	w.str(vfState, string(v.State))
	w.int(vfPriority, int64(v.Priority))
	w.raw(vfPayload, v.Payload)
	w.raw(vfMetadata, v.Metadata)
	if w.key(vfTags) {
		appendList(&w, v.Tags, appendJSONString)
	}
	w.int(vfAttempt, int64(v.Attempt))
	w.int(vfMaxRetries, int64(v.MaxRetries))
	w.time(vfRunAt, &v.RunAt)
	w.time(vfCreatedAt, &v.CreatedAt)
	w.time(vfStartedAt, v.StartedAt)
	w.time(vfFinishedAt, v.FinishedAt)
	w.time(vfUpdatedAt, &v.UpdatedAt)
	w.time(vfLeaseUntil, v.LeaseUntil)
	w.optStr(vfWorkerID, v.WorkerID)
	w.time(vfHeartbeatAt, v.HeartbeatAt)
	w.int(vfProgress, int64(v.Progress))
	w.str(vfProgressMessage, v.ProgressMessage)
	w.raw(vfCheckpoint, v.Checkpoint)
	w.raw(vfResult, v.Result)
	if w.key(vfErrors) {
		w.value(v.Errors)
	}
	w.optStr(vfIdempotencyKey, v.IdempotencyKey)
	if w.key(vfDependsOn) {
		appendList(&w, v.DependsOn, appendInt)
	}
	w.optStr(vfWorkflowID, v.WorkflowID)
	w.optStr(vfStage, v.Stage)
	if w.key(vfCancelRequested) {
		w.b = strconv.AppendBool(w.b, v.CancelRequested)
	}
	if v.Traceparent != "" { // omitempty
		w.str(vfTraceparent, v.Traceparent)
	}
	if w.err != nil {
		return dst, w.err
	}
	return append(w.b, '}'), nil
}

// viewWriter writes a JobView's fields as encoding/json does: strings with
// HTML characters escaped, raw JSON compacted, times in RFC 3339 with
// nanoseconds, nil lists and pointers as null.
type viewWriter struct {
	b     []byte
	f     ViewFields
	comma bool
	err   error
}

// key writes the name of field bit when f picks it, and answers whether
// it did.
func (w *viewWriter) key(bit ViewFields) bool {
	if w.f&bit == 0 {
		return false
	}
	if w.comma {
		w.b = append(w.b, ',')
	}
	w.comma = true
	k := 0
	for bit>>k != 1 {
		k++
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, viewFieldNames[k]...)
	w.b = append(w.b, '"', ':')
	return true
}

func (w *viewWriter) int(bit ViewFields, n int64) {
	if w.key(bit) {
		w.b = appendInt(w.b, n)
	}
}

func (w *viewWriter) str(bit ViewFields, s string) {
	if w.key(bit) {
		w.b = appendJSONString(w.b, s)
	}
}

func (w *viewWriter) optStr(bit ViewFields, s *string) {
	if !w.key(bit) {
		return
	}
	if s == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = appendJSONString(w.b, *s)
}

func (w *viewWriter) time(bit ViewFields, t *time.Time) {
	if !w.key(bit) {
		return
	}
	if t == nil {
		w.b = append(w.b, "null"...)
		return
	}
	if y := t.Year(); y < 0 || y > 9999 || t.Location() != time.UTC {
		w.value(*t) // encoding/json's own checks of other zones and years
		return
	}
	w.b = append(w.b, '"')
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	w.b = append(w.b, '"')
}

// appendList writes xs as encoding/json writes a slice: null when nil.
func appendList[T any](w *viewWriter, xs []T, each func([]byte, T) []byte) {
	if xs == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, '[')
	for i, x := range xs {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.b = each(w.b, x)
	}
	w.b = append(w.b, ']')
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// raw writes stored JSON compacted, with HTML characters escaped, as
// encoding/json writes a json.RawMessage; nil is null.
func (w *viewWriter) raw(bit ViewFields, r json.RawMessage) {
	if !w.key(bit) {
		return
	}
	if r == nil {
		w.b = append(w.b, "null"...)
		return
	}
	buf := bytes.NewBuffer(w.b)
	if err := json.Compact(buf, r); err != nil {
		w.value(r) // encoding/json's own error
		return
	}
	compacted := buf.Bytes()
	if k := len(w.b); bytes.ContainsAny(compacted[k:], "<>&\u2028\u2029") {
		// After compaction these can only be inside strings.
		w.b = appendHTMLEscaped(compacted[:k], compacted[k:])
		return
	}
	w.b = compacted
}

// value writes v through encoding/json: lists of structs, and errors.
func (w *viewWriter) value(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.b = append(w.b, b...)
}

// appendHTMLEscaped appends src with <, >, & and U+2028/U+2029 escaped as
// encoding/json escapes them; src must not overlap dst's spare room.
func appendHTMLEscaped(dst, src []byte) []byte {
	src = bytes.Clone(src)
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
			i += 2
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes it; strings of
// plain characters, nearly all, skip its machinery.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // strings always encode
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
