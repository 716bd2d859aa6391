package main

import (
	"io"
	"log/slog"
	"os"
)

// logFormatFlag is --log-format of the commands that log (serve, worker).
const logFormatUsage = "log lines as text or json (env SKIPLOCK_LOG_FORMAT; default text)"

// newLogger answers a logger writing to w in format (text or json; empty
// takes SKIPLOCK_LOG_FORMAT, then text) from level up.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	if format == "" {
		format = os.Getenv("SKIPLOCK_LOG_FORMAT")
	}
	opts := &slog.HandlerOptions{Level: level}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, usagef("--log-format: %q is not text or json", format)
}
