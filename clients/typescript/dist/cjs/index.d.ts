export { Client, DEFAULT_TIMEOUT_MS, type ClientOptions } from "./client.js";
export { Worker, DEFAULT_CONCURRENCY, DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_WAIT_SECONDS, type Handler, type RunOptions, type WorkerOptions } from "./worker.js";
export type { JobContext, ClaimedJob } from "./running.js";
export { ConnectionError, JobInterrupted, PermanentError, SkiplockError, SnoozeError, permanent, snooze, type InterruptReason, } from "./errors.js";
export { consoleLogger, type Logger, type LogFields, type LogLevel } from "./logger.js";
export type { BackoffOptions } from "./backoff.js";
export type { RequestOptions } from "./http.js";
export type * from "./types.js";
export type { components, paths } from "./generated/openapi.js";
