package skiplockotel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/skiplock/skiplock"
	"github.com/skiplock/skiplock/driver"
	"github.com/skiplock/skiplock/internal/pgtest"
	"github.com/skiplock/skiplock/internal/sqlitetest"
	"github.com/skiplock/skiplock/server"
	"github.com/skiplock/skiplock/skiplockotel"
)

var drivers = map[string]func(t *testing.T) driver.Driver{
	"sqlite":   func(t *testing.T) driver.Driver { return sqlitetest.New(t) },
	"postgres": func(t *testing.T) driver.Driver { d, _ := pgtest.Schema(t); return d },
}

type encodeArgs struct {
	Fail bool `json:"fail"`
}

func (encodeArgs) Kind() string { return "encode" }

// traced is a client on drv whose spans go to the recorder it answers.
func traced(t *testing.T, drv driver.Driver, cfg *skiplock.Config) (*skiplock.Client, *tracetest.SpanRecorder, trace.Tracer) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	skiplockotel.New(&skiplockotel.Config{TracerProvider: tp}).Install(cfg)
	c, err := skiplock.NewClient(drv, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec, tp.Tracer("producer")
}

// byName answers the ended spans by name, failing when one is not there
// exactly once.
func byName(t *testing.T, rec *tracetest.SpanRecorder, names ...string) map[string]sdktrace.ReadOnlySpan {
	t.Helper()
	out := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		if _, dup := out[s.Name()]; dup {
			t.Fatalf("span %q twice", s.Name())
		}
		out[s.Name()] = s
	}
	for _, n := range names {
		if out[n] == nil {
			t.Fatalf("no span %q among %d", n, len(rec.Ended()))
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// A job inserted under a producer's span is worked in the same trace:
// producer → skiplock.insert → skiplock.work.
func TestTraceProducerInsertWork(t *testing.T) {
	t.Parallel()
	for name, open := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			workers := skiplock.NewWorkers()
			var workerTrace trace.TraceID
			skiplock.MustAddWorker(workers, skiplock.WorkFunc[encodeArgs](func(ctx context.Context, j *skiplock.Job[encodeArgs]) error {
				workerTrace = trace.SpanContextFromContext(ctx).TraceID()
				if j.Args.Fail {
					return skiplock.Permanent(errors.New("bad codec"))
				}
				return nil
			}))
			c, rec, tracer := traced(t, open(t), &skiplock.Config{Queues: map[string]skiplock.QueueConfig{"default": {}}, Workers: workers})
			pctx, producer := tracer.Start(ctx, "producer")
			res, err := c.Insert(pctx, encodeArgs{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			producer.End()
			if _, err := c.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			spans := byName(t, rec, "producer", "skiplock.insert", "skiplock.work")
			p, ins, work := spans["producer"], spans["skiplock.insert"], spans["skiplock.work"]
			tid := p.SpanContext().TraceID()
			if ins.SpanContext().TraceID() != tid || work.SpanContext().TraceID() != tid || workerTrace != tid {
				t.Fatalf("traces: producer %s insert %s work %s worker %s", tid, ins.SpanContext().TraceID(),
					work.SpanContext().TraceID(), workerTrace)
			}
			if ins.Parent().SpanID() != p.SpanContext().SpanID() || work.Parent().SpanID() != ins.SpanContext().SpanID() {
				t.Fatal("spans are not producer → insert → work")
			}
			if ins.SpanKind() != trace.SpanKindProducer || work.SpanKind() != trace.SpanKindConsumer {
				t.Fatalf("kinds %s %s", ins.SpanKind(), work.SpanKind())
			}
			for key, want := range map[string]string{"skiplock.job.kind": "encode", "skiplock.job.queue": "default",
				"skiplock.job.attempt": "1", "skiplock.outcome": "completed"} {
				if got := attr(work, key); got != want {
					t.Fatalf("work span %s = %q, want %q", key, got, want)
				}
			}
			if attr(ins, "skiplock.job.id") != attr(work, "skiplock.job.id") || attr(work, "skiplock.job.id") == "" {
				t.Fatalf("job ids: insert %q work %q", attr(ins, "skiplock.job.id"), attr(work, "skiplock.job.id"))
			}
			var tp string
			if ok, _ := skiplock.MetadataValue(res.Job, "traceparent", &tp); !ok || tp[3:35] != tid.String() {
				t.Fatalf("job metadata %s", res.Job.Metadata)
			}

			// A failed attempt: outcome error, status Error with the message.
			rec2Before := len(rec.Ended())
			if _, err := c.Insert(ctx, encodeArgs{Fail: true}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			var failed sdktrace.ReadOnlySpan
			for _, s := range rec.Ended()[rec2Before:] {
				if s.Name() == "skiplock.work" {
					failed = s
				}
			}
			if failed == nil || attr(failed, "skiplock.outcome") != "error" || failed.Status().Code != codes.Error ||
				failed.Status().Description != "permanent: bad codec" {
				t.Fatalf("failed work span %+v", failed)
			}
		})
	}
}

// Across the HTTP API: the producer sends its traceparent with the enqueue
// (header or field), the server's insert span continues it, and the claim
// answers the traceparent a worker in any language continues from.
func TestTraceAcrossHTTP(t *testing.T) {
	t.Parallel()
	for name, open := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, rec, tracer := traced(t, open(t), &skiplock.Config{})
			srv, err := server.New(server.Config{Client: c, OpenWithoutTokens: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(ts.Close)
			post := func(path string, body any, header string) map[string]json.RawMessage {
				t.Helper()
				b, _ := json.Marshal(body)
				req, _ := http.NewRequest(http.MethodPost, ts.URL+path, bytes.NewReader(b))
				req.Header.Set("Content-Type", "application/json")
				if header != "" {
					req.Header.Set("traceparent", header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var out map[string]json.RawMessage
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode >= 300 {
					t.Fatalf("POST %s: %d %s", path, resp.StatusCode, out["error"])
				}
				return out
			}
			pctx, producer := tracer.Start(ctx, "producer")
			carrier := propagation.MapCarrier{}
			propagation.TraceContext{}.Inject(pctx, carrier)
			producer.End()
			post("/v1/jobs", map[string]any{"kind": "encode", "queue": "header"}, carrier.Get("traceparent"))
			post("/v1/jobs", map[string]any{"kind": "encode", "queue": "field", "traceparent": carrier.Get("traceparent")}, "")

			for _, queue := range []string{"header", "field"} {
				out := post("/v1/queues/"+queue+"/claim", map[string]any{"worker_id": "py-1"}, "")
				var jobs []struct {
					ID          int64  `json:"id"`
					Traceparent string `json:"traceparent"`
				}
				if err := json.Unmarshal(out["jobs"], &jobs); err != nil || len(jobs) != 1 {
					t.Fatalf("claim %s: %s %v", queue, out["jobs"], err)
				}
				// The worker, in another language, continues from it.
				wctx := propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": jobs[0].Traceparent})
				_, work := tracer.Start(wctx, "python work")
				work.End()
			}
			var inserts, works []sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				switch s.Name() {
				case "skiplock.insert":
					inserts = append(inserts, s)
				case "python work":
					works = append(works, s)
				}
			}
			if len(inserts) != 2 || len(works) != 2 {
				t.Fatalf("%d insert spans, %d work spans", len(inserts), len(works))
			}
			tid := producer.SpanContext().TraceID()
			for i := range 2 {
				if inserts[i].SpanContext().TraceID() != tid || inserts[i].Parent().SpanID() != producer.SpanContext().SpanID() {
					t.Fatalf("insert %d is not the producer's child", i)
				}
				if works[i].SpanContext().TraceID() != tid || works[i].Parent().SpanID() != inserts[i].SpanContext().SpanID() {
					t.Fatalf("work %d is not insert %d's child", i, i)
				}
			}
		})
	}
}
