package pgdriver

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/skiplock/skiplock/driver"
)

var copyColumns = []string{"id", "kind", "op", "queue", "tenant", "state", "priority", "payload", "metadata",
	"tags", "max_retries", "run_at", "workflow_id", "stage"}

// copyColumnsPlain leave op, metadata, tags, workflow_id and stage to their
// defaults (NULL, '{}', '{}'): most batches set none of them, and the
// server then parses five values fewer per row.
var copyColumnsPlain = []string{"id", "kind", "queue", "tenant", "state", "priority", "payload", "max_retries", "run_at"}

var (
	copyStatement      = copySQL(copyColumns)
	copyStatementPlain = copySQL(copyColumnsPlain)
)

func copySQL(cols []string) string {
	return "COPY skiplock_jobs (" + strings.Join(cols, ", ") + ") FROM STDIN (FORMAT binary)"
}

// encodeCopy appends to b jobs, with ids taken from the sequence, as the
// binary COPY stream of copyStatement or copyStatementPlain, and answers the
// stream and which statement reads it.
//
// It is written by hand: pgx's CopyFrom boxes every value of every row in
// an interface and looks up its encoder, which cost the insert more Go CPU
// (and garbage) than the rest of it. The row has nine or fourteen columns
// of five types, and the format is fixed (PostgreSQL's "Binary Format" of
// COPY: a header, then per row a count of fields and each field as its
// length and its bytes, then a trailer).
func encodeCopy(b []byte, jobs []*driver.InsertParams, ids []int64, now time.Time) ([]byte, string) {
	plain := true
	for _, p := range jobs {
		if p.Op != "" || len(p.Metadata) > 0 || len(p.Tags) > 0 || p.WorkflowID != "" || p.Stage != "" {
			plain = false
			break
		}
	}
	w := &copyWriter{b: b}
	w.b = append(w.b, "PGCOPY\n\377\r\n\000"...)
	w.int32(0) // flags
	w.int32(0) // header extension length
	fields := int16(len(copyColumns))
	if plain {
		fields = int16(len(copyColumnsPlain))
	}
	for i, p := range jobs {
		runAt, state := p.RunAt, driver.StatePending
		if runAt.IsZero() {
			runAt = now
		}
		if runAt.After(now) {
			state = driver.StateScheduled
		}
		if p.Paused {
			state = driver.StatePaused
		}
		w.int16(fields)
		w.field(8)
		w.int64(ids[i])
		w.text(p.Kind)
		if !plain {
			w.nullText(p.Op)
		}
		w.text(p.Queue)
		w.text(p.Tenant)
		w.text(string(state))
		w.field(2)
		w.int16(int16(p.Priority))
		w.jsonb(p.Payload)
		if !plain {
			w.jsonb(p.Metadata)
			w.textArray(p.Tags)
		}
		w.field(4)
		w.int32(int32(p.MaxRetries))
		w.field(8)
		w.int64(pgMicros(runAt))
		if !plain {
			w.nullText(p.WorkflowID)
			w.nullText(p.Stage)
		}
	}
	w.int16(-1) // trailer
	if plain {
		return w.b, copyStatementPlain
	}
	return w.b, copyStatement
}

// copySize is about the length of jobs' COPY stream, so that it is
// allocated once.
func copySize(jobs []*driver.InsertParams) int {
	n := 21
	for _, p := range jobs {
		n += 110 + len(p.Kind) + len(p.Op) + len(p.Queue) + len(p.Tenant) + len(p.Payload) + len(p.Metadata) +
			len(p.WorkflowID) + len(p.Stage)
		for _, t := range p.Tags {
			n += 4 + len(t)
		}
	}
	return n
}

// textOID is the type of a text[]'s elements, which its binary form names.
const textOID = 25

// pgEpoch is PostgreSQL's zero time: timestamps count microseconds from it.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()

func pgMicros(t time.Time) int64 {
	return (t.Unix()-pgEpoch)*1_000_000 + int64(t.Nanosecond())/1000
}

type copyWriter struct{ b []byte }

func (w *copyWriter) int16(v int16) { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *copyWriter) int32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *copyWriter) int64(v int64) { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }

// field starts a field of n bytes; -1 is NULL.
func (w *copyWriter) field(n int) { w.int32(int32(n)) }

func (w *copyWriter) text(s string) {
	w.field(len(s))
	w.b = append(w.b, s...)
}

// nullText writes "" as NULL.
func (w *copyWriter) nullText(s string) {
	if s == "" {
		w.field(-1)
		return
	}
	w.text(s)
}

// jsonb writes a document (empty: {}) in jsonb's binary form: a version
// byte, 1, then the text, which the server parses and checks.
func (w *copyWriter) jsonb(doc []byte) {
	if len(doc) == 0 {
		doc = emptyDoc
	}
	w.field(1 + len(doc))
	w.b = append(w.b, 1)
	w.b = append(w.b, doc...)
}

var emptyDoc = []byte("{}")

// textArray writes a one-dimensional text[] (nil: empty) in the binary form
// of arrays: dimensions, a has-nulls flag, the element type, each
// dimension's length and lower bound, then the elements.
func (w *copyWriter) textArray(a []string) {
	n := 12
	if len(a) > 0 {
		n += 8
	}
	for _, s := range a {
		n += 4 + len(s)
	}
	w.field(n)
	if len(a) == 0 {
		w.int32(0) // no dimensions
		w.int32(0)
		w.int32(textOID)
		return
	}
	w.int32(1)
	w.int32(0)
	w.int32(textOID)
	w.int32(int32(len(a)))
	w.int32(1)
	for _, s := range a {
		w.text(s)
	}
}
