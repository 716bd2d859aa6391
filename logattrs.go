package skiplock

import "log/slog"

// jobLog is the attributes of every log line about a job, flat: job_id,
// kind, queue, attempt, and trace_id when the job carries a traceparent.
// They are worked out only when a line is written.
type jobLog struct{ row *JobRow }

// LogValue answers the attributes as a group with no key, which handlers
// write inline.
func (l jobLog) LogValue() slog.Value {
	attrs := []slog.Attr{slog.Int64("job_id", l.row.ID), slog.String("kind", l.row.Kind),
		slog.String("queue", l.row.Queue), slog.Int("attempt", l.row.Attempt)}
	if id := TraceID(l.row); id != "" {
		attrs = append(attrs, slog.String("trace_id", id))
	}
	return slog.GroupValue(attrs...)
}

// jobAttr is the log attribute of a job's fields (see jobLog).
func jobAttr(row *JobRow) slog.Attr { return slog.Any("", jobLog{row}) }

// TraceID answers the W3C trace id of the traceparent in a job's metadata
// (32 hex digits), or "" when it carries none.
func TraceID(job *JobRow) string {
	tp := jobTraceparent(job)
	if len(tp) != 55 {
		return ""
	}
	return tp[3:35]
}
