package main

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/skiplock/skiplock/skiplockotel"
)

// commandSpan is the span of one command run, when tracing is on.
type commandSpan struct {
	span trace.Span
	// traceparent is what the command gets as TRACEPARENT: the span's when
	// tracing, else the job's own, so that a command that traces itself
	// still joins the producer's trace.
	traceparent string
}

// startSpan starts the span of a command run for j, child of the trace j
// was enqueued in.
func (w *httpWorker) startSpan(j claimedJob) *commandSpan {
	if !w.cfg.traces.on() {
		return &commandSpan{traceparent: j.Traceparent}
	}
	prop := propagation.TraceContext{}
	ctx := prop.Extract(context.Background(), propagation.MapCarrier{"traceparent": j.Traceparent})
	ctx, span := w.cfg.traces.tp.Tracer(skiplockotel.ScopeName).Start(ctx, "skiplock.work",
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(skiplockotel.AttrJobID.Int64(j.ID),
			skiplockotel.AttrJobKind.String(j.Kind), skiplockotel.AttrJobQueue.String(j.Queue),
			skiplockotel.AttrJobAttempt.Int(j.Attempt), attribute.String("skiplock.worker.command", w.cfg.command)))
	carrier := propagation.MapCarrier{}
	prop.Inject(ctx, carrier)
	return &commandSpan{span: span, traceparent: carrier.Get("traceparent")}
}

// outcome records how the command run ended (see httpWorker.watch).
func (s *commandSpan) outcome(stop string, err error) {
	if s.span == nil {
		return
	}
	switch {
	case stop != "":
		s.span.SetAttributes(skiplockotel.AttrOutcome.String(stop))
		s.span.SetStatus(codes.Error, stop)
	case err != nil:
		s.span.SetAttributes(skiplockotel.AttrOutcome.String("error"))
		s.span.RecordError(err)
		s.span.SetStatus(codes.Error, err.Error())
	default:
		s.span.SetAttributes(skiplockotel.AttrOutcome.String("completed"))
	}
}

func (s *commandSpan) end() {
	if s.span != nil {
		s.span.End()
	}
}

// jobLogAttrs are the attributes of every log line about j.
func jobLogAttrs(j claimedJob, traceparent string) []any {
	attrs := []any{"job_id", j.ID, "kind", j.Kind, "queue", j.Queue, "attempt", j.Attempt}
	if len(traceparent) == 55 {
		attrs = append(attrs, "trace_id", traceparent[3:35])
	}
	return attrs
}
