package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// tracing is the trace pipeline that the OTEL_* environment chose, or
// none (tp nil): tracing is off unless OTEL_TRACES_EXPORTER or an OTLP
// endpoint is set.
type tracing struct {
	tp       *sdktrace.TracerProvider
	exporter string
}

// setupTracing reads the standard OpenTelemetry environment:
// OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER (otlp, console, none),
// OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL (http/protobuf, grpc) and the
// exporters' own (endpoint, headers, …); the SDK reads OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES and OTEL_TRACES_SAMPLER itself.
func setupTracing(ctx context.Context) (*tracing, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return &tracing{}, nil
	}
	exporter := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER"))
	if exporter == "" && (os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "") {
		exporter = "otlp"
	}
	var exp sdktrace.SpanExporter
	var err error
	switch exporter {
	case "", "none":
		return &tracing{}, nil
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(os.Stderr))
	case "otlp":
		protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if protocol == "" {
			protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		switch protocol {
		case "", "http/protobuf":
			exp, err = otlptracehttp.New(ctx)
		case "grpc":
			exp, err = otlptracegrpc.New(ctx)
		default:
			return nil, usagef("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not http/protobuf or grpc", protocol)
		}
	default:
		return nil, usagef("OTEL_TRACES_EXPORTER: %q is not otlp, console or none", exporter)
	}
	if err != nil {
		return nil, fmt.Errorf("trace exporter %s: %w", exporter, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return &tracing{tp: tp, exporter: exporter}, nil
}

// on reports whether spans are made.
func (t *tracing) on() bool { return t != nil && t.tp != nil }

// shutdown sends the spans still buffered, for up to 10 seconds.
func (t *tracing) shutdown() error {
	if !t.on() {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("flush traces: %w", err)
	}
	return nil
}
