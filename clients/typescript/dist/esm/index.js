// @skiplock/client: a client and a worker for Skiplock's HTTP API.
export { Client, DEFAULT_TIMEOUT_MS } from "./client.js";
export { Worker, DEFAULT_CONCURRENCY, DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_WAIT_SECONDS } from "./worker.js";
export { ConnectionError, JobInterrupted, PermanentError, SkiplockError, SnoozeError, permanent, snooze, } from "./errors.js";
export { consoleLogger } from "./logger.js";
