package pgdriver

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiplock/skiplock/driver"
)

// copyRow is a job as COPY writes it: its parameters, id, first state and
// run_at.
type copyRow struct {
	p     *driver.InsertParams
	id    int64
	state driver.JobState
	runAt time.Time
}

// copyField writes one column of a row.
type copyField struct {
	// plain: the column is written by the statement for batches that set
	// no op, metadata, tags, workflow_id or stage (copyStatementPlain); the
	// rest keep their defaults (NULL, '{}', '{}'), and the server parses
	// five values fewer per row.
	plain bool
	write func(w *copyWriter, r *copyRow)
}

// copyFields are the columns COPY writes, by name; their order is
// driver.JobColumns'.
var copyFields = map[string]copyField{
	"id":          {true, func(w *copyWriter, r *copyRow) { w.field(8); w.int64(r.id) }},
	"kind":        {true, func(w *copyWriter, r *copyRow) { w.text(r.p.Kind) }},
	"op":          {false, func(w *copyWriter, r *copyRow) { w.nullText(r.p.Op) }},
	"queue":       {true, func(w *copyWriter, r *copyRow) { w.text(r.p.Queue) }},
	"tenant":      {true, func(w *copyWriter, r *copyRow) { w.text(r.p.Tenant) }},
	"state":       {true, func(w *copyWriter, r *copyRow) { w.text(string(r.state)) }},
	"priority":    {true, func(w *copyWriter, r *copyRow) { w.field(2); w.int16(int16(r.p.Priority)) }},
	"payload":     {true, func(w *copyWriter, r *copyRow) { w.jsonb(r.p.Payload) }},
	"metadata":    {false, func(w *copyWriter, r *copyRow) { w.jsonb(r.p.Metadata) }},
	"tags":        {false, func(w *copyWriter, r *copyRow) { w.textArray(r.p.Tags) }},
	"max_retries": {true, func(w *copyWriter, r *copyRow) { w.field(4); w.int32(int32(r.p.MaxRetries)) }},
	"run_at":      {true, func(w *copyWriter, r *copyRow) { w.field(8); w.int64(pgMicros(r.runAt)) }},
	"workflow_id": {false, func(w *copyWriter, r *copyRow) { w.nullText(r.p.WorkflowID) }},
	"stage":       {false, func(w *copyWriter, r *copyRow) { w.nullText(r.p.Stage) }},
}

// copyColumns and copyColumnsPlain name the columns of the two COPY
// statements, in driver.JobColumns' order; copyWriters and
// copyWritersPlain write them in the same order.
var copyColumns, copyColumnsPlain, copyWriters, copyWritersPlain = copyOrder()

func copyOrder() (cols, plainCols []string, writers, plainWriters []func(*copyWriter, *copyRow)) {
	for _, c := range driver.JobColumns {
		f, ok := copyFields[c]
		if !ok {
			continue
		}
		cols, writers = append(cols, c), append(writers, f.write)
		if f.plain {
			plainCols, plainWriters = append(plainCols, c), append(plainWriters, f.write)
		}
	}
	if len(cols) != len(copyFields) {
		panic("pgdriver: a COPY field names no job column")
	}
	return cols, plainCols, writers, plainWriters
}

// The COPY statements into the hot table, made once.
var (
	copyStatement      = copyInto("skiplock_jobs", copyColumns)
	copyStatementPlain = copyInto("skiplock_jobs", copyColumnsPlain)
)

// copySQL answers the COPY of cols (copyColumns or copyColumnsPlain) into
// table ("": the hot table).
func copySQL(table string, cols []string) string {
	switch {
	case table != "":
		return copyInto(pgx.Identifier{table}.Sanitize(), cols)
	case len(cols) == len(copyColumns):
		return copyStatement
	default:
		return copyStatementPlain
	}
}

func copyInto(table string, cols []string) string {
	return "COPY " + table + " (" + strings.Join(cols, ", ") + ") FROM STDIN (FORMAT binary)"
}

// copyReader reads jobs, with ids taken from the sequence, as the binary
// COPY stream of copyColumns (or copyColumnsPlain). It
// encodes rows as they are read, a chunk at a time, so that a large batch
// is never held twice in memory.
//
// It is written by hand: pgx's CopyFrom boxes every value of every row in
// an interface and looks up its encoder, which cost the insert more Go CPU
// (and garbage) than the rest of it. The row has nine or fourteen columns
// of five types, and the format is fixed (PostgreSQL's "Binary Format" of
// COPY: a header, then per row a count of fields and each field as its
// length and its bytes, then a trailer).
type copyReader struct {
	jobs  []*driver.InsertParams
	ids   []int64
	now   time.Time
	plain bool
	w     copyWriter
	off   int // read so far of w.b
	next  int // the next job to encode; -1 before the header
	ended bool
}

// copyChunk is how many bytes copyReader encodes before it hands them out.
const copyChunk = 64 << 10

func newCopyReader(jobs []*driver.InsertParams, ids []int64, now time.Time) (*copyReader, []string) {
	r := &copyReader{jobs: jobs, ids: ids, now: now, plain: true, next: -1}
	for _, p := range jobs {
		if p.Op != "" || len(p.Metadata) > 0 || len(p.Tags) > 0 || p.WorkflowID != "" || p.Stage != "" {
			r.plain = false
			break
		}
	}
	r.w.b = make([]byte, 0, min(copyChunk+1024, 64+160*len(jobs)))
	if r.plain {
		return r, copyColumnsPlain
	}
	return r, copyColumns
}

func (r *copyReader) Read(p []byte) (int, error) {
	for r.off == len(r.w.b) {
		if r.ended {
			return 0, io.EOF
		}
		r.w.b, r.off = r.w.b[:0], 0
		r.fill()
	}
	n := copy(p, r.w.b[r.off:])
	r.off += n
	return n, nil
}

// fill encodes the header (first), rows until a chunk is full, and the
// trailer (last).
func (r *copyReader) fill() {
	w := &r.w
	if r.next < 0 {
		w.b = append(w.b, "PGCOPY\n\377\r\n\000"...)
		w.int32(0) // flags
		w.int32(0) // header extension length
		r.next = 0
	}
	writers := copyWriters
	if r.plain {
		writers = copyWritersPlain
	}
	fields := int16(len(writers))
	var row copyRow
	for ; r.next < len(r.jobs) && len(w.b) < copyChunk; r.next++ {
		p := r.jobs[r.next]
		row = copyRow{p: p, id: r.ids[r.next], runAt: p.RunAt, state: driver.StatePending}
		if row.runAt.IsZero() {
			row.runAt = r.now
		}
		if row.runAt.After(r.now) {
			row.state = driver.StateScheduled
		}
		if p.Paused {
			row.state = driver.StatePaused
		}
		w.int16(fields)
		for _, write := range writers {
			write(w, &row)
		}
	}
	if r.next == len(r.jobs) {
		w.int16(-1) // trailer
		r.ended = true
	}
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

func (e executor) JobInsertFast(ctx context.Context, jobs []*driver.InsertParams) ([]int64, error) {
	if driver.HasFlow(jobs) {
		return e.insertFastFlow(ctx, jobs)
	}
	var ids []int64
	err := e.insertInto(ctx, func(e executor, table string) (err error) {
		ids, err = e.insertCopy(ctx, table, jobs)
		return err
	})
	return ids, err
}

// insertCopy takes ids for jobs from the sequence and COPYs them into
// table ("": the hot table).
func (e executor) insertCopy(ctx context.Context, table string, jobs []*driver.InsertParams) ([]int64, error) {
	ids := make([]int64, 0, len(jobs))
	err := e.inTx(ctx, func(tx executor) error {
		rows, err := tx.q.Query(ctx, jobNextIDs.SQL, jobNextIDs.Args(countArg{len(jobs)})...)
		if err != nil {
			return err
		}
		var id int64
		dest := []any{&id} // one target for every row: a fresh one per row escapes
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			ids = append(ids, id)
		}
		if rows.Close(); rows.Err() != nil {
			return rows.Err()
		}
		if len(ids) != len(jobs) {
			return fmt.Errorf("took %d ids from the sequence for %d jobs", len(ids), len(jobs))
		}
		src, cols := newCopyReader(jobs, ids, time.Now())
		_, err = tx.q.(pgx.Tx).Conn().PgConn().CopyFrom(ctx, src, copySQL(table, cols))
		return err
	})
	return ids, err
}
