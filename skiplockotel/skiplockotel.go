// Package skiplockotel traces Skiplock jobs with OpenTelemetry: a span for
// each insert and one for each attempt's work, in one trace with the code
// that enqueued the job. The insert span's context travels in the job's
// metadata as a W3C traceparent (and tracestate), so a worker in another
// process, or in another language over the HTTP API, continues the trace.
//
// It is built on the client's middleware and is the only package of the
// library that imports OpenTelemetry:
//
//	tracing := skiplockotel.New(nil) // the global TracerProvider
//	cfg.WorkMiddleware = append(cfg.WorkMiddleware, tracing.Work)
//	cfg.InsertMiddleware = append(cfg.InsertMiddleware, tracing.Insert)
//
// or tracing.Install(cfg).
package skiplockotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/skiplock/skiplock"
)

// ScopeName is the instrumentation scope of the spans.
const ScopeName = "github.com/skiplock/skiplock/skiplockotel"

// The metadata keys that carry the trace context of a job.
const (
	TraceparentKey = "traceparent"
	TracestateKey  = "tracestate"
)

// Span attribute keys.
const (
	AttrJobID      = attribute.Key("skiplock.job.id")
	AttrJobKind    = attribute.Key("skiplock.job.kind")
	AttrJobQueue   = attribute.Key("skiplock.job.queue")
	AttrJobAttempt = attribute.Key("skiplock.job.attempt")
	AttrJobCount   = attribute.Key("skiplock.job.count")
	AttrOutcome    = attribute.Key("skiplock.outcome")
)

// Config chooses where spans go; zero values take OpenTelemetry's globals.
type Config struct {
	TracerProvider trace.TracerProvider
}

// Tracing makes the spans; its Work and Insert are the client's middleware.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TraceContext
}

// New answers tracing with cfg (nil: the global TracerProvider).
func New(cfg *Config) *Tracing {
	var tp trace.TracerProvider
	if cfg != nil {
		tp = cfg.TracerProvider
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &Tracing{tracer: tp.Tracer(ScopeName)}
}

// Install adds t's middleware to cfg, outermost of the work middleware so
// that the others run inside the attempt's span.
func (t *Tracing) Install(cfg *skiplock.Config) {
	cfg.WorkMiddleware = append([]skiplock.WorkMiddleware{t.Work}, cfg.WorkMiddleware...)
	cfg.InsertMiddleware = append(cfg.InsertMiddleware, t.Insert)
}

// Insert is an InsertMiddleware: a producer span "skiplock.insert" around
// the insert, child of ctx's span (or, when ctx has none, of the
// traceparent the first job already carries, as the HTTP API stores it),
// whose context it writes into each job's metadata.
func (t *Tracing) Insert(ctx context.Context, jobs []*skiplock.InsertJob, next func(context.Context) error) error {
	parent := ctx
	var links []trace.Link
	if !trace.SpanContextFromContext(ctx).IsValid() {
		for i, j := range jobs {
			sc := t.extract(j.MetadataValue)
			if !sc.IsValid() {
				continue
			}
			if i == 0 {
				parent = trace.ContextWithRemoteSpanContext(ctx, sc)
			} else if !sc.Equal(trace.SpanContextFromContext(parent)) {
				links = append(links, trace.Link{SpanContext: sc})
			}
		}
	}
	attrs := []attribute.KeyValue{AttrJobCount.Int(len(jobs))}
	if len(jobs) > 0 {
		attrs = append(attrs, AttrJobKind.String(jobs[0].Kind), AttrJobQueue.String(jobs[0].Queue))
	}
	ctx, span := t.tracer.Start(parent, "skiplock.insert", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attrs...), trace.WithLinks(links...))
	defer span.End()
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	for _, j := range jobs {
		for _, key := range []string{TraceparentKey, TracestateKey} {
			if v := carrier.Get(key); v != "" {
				if err := j.SetMetadata(key, v); err != nil {
					span.RecordError(err)
					span.SetStatus(codes.Error, err.Error())
					return err
				}
			}
		}
	}
	err := next(ctx)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return err
	}
	if len(jobs) == 1 {
		span.SetAttributes(AttrJobID.Int64(jobs[0].ID))
	}
	return nil
}

// Work is a WorkMiddleware: a consumer span "skiplock.work" for the
// attempt, child of the insert span the job's metadata names, with the job's
// id, kind, queue and attempt, and its outcome (completed, snoozed,
// cancelled, paused, panic, error). The worker gets the span in its context.
func (t *Tracing) Work(ctx context.Context, job *skiplock.JobRow, next func(context.Context) error) error {
	parent := ctx
	if sc := t.extract(func(key string, v any) (bool, error) { return skiplock.MetadataValue(job, key, v) }); sc.IsValid() {
		parent = trace.ContextWithRemoteSpanContext(ctx, sc)
	}
	ctx, span := t.tracer.Start(parent, "skiplock.work", trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(AttrJobID.Int64(job.ID), AttrJobKind.String(job.Kind), AttrJobQueue.String(job.Queue),
			AttrJobAttempt.Int(job.Attempt)))
	defer span.End()
	err := next(ctx)
	span.SetAttributes(AttrOutcome.String(Outcome(err)))
	if o := Outcome(err); o != "completed" && o != "snoozed" && o != "paused" {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	return err
}

// Outcome names an attempt's error as the work span records it.
func Outcome(err error) string {
	var snooze *skiplock.SnoozeError
	var pe *skiplock.PanicError
	switch {
	case err == nil:
		return "completed"
	case errors.As(err, &snooze):
		return "snoozed"
	case errors.Is(err, skiplock.ErrCancelled):
		return "cancelled"
	case errors.Is(err, skiplock.ErrPaused):
		return "paused"
	case errors.As(err, &pe):
		return "panic"
	default:
		return "error"
	}
}

// extract reads a span context from the traceparent and tracestate that
// value finds in a job's metadata.
func (t *Tracing) extract(value func(key string, v any) (bool, error)) trace.SpanContext {
	carrier := propagation.MapCarrier{}
	for _, key := range []string{TraceparentKey, TracestateKey} {
		var s string
		if ok, err := value(key, &s); ok && err == nil {
			carrier[key] = s
		}
	}
	if carrier[TraceparentKey] == "" {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(t.prop.Extract(context.Background(), carrier))
}
