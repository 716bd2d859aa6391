// Package server serves Skiplock's HTTP API (docs/api.md): producers
// enqueue and inspect jobs, workers in any language claim (with long
// polling), heartbeat, complete and fail them, and dashboards follow the
// server-sent event feed. Bearer tokens with a role and an optional tenant
// scope guard every route; /metrics speaks Prometheus.
//
// The server acts through a skiplock.Client; `skiplock serve` runs both.
package server
