// A Skiplock worker in Node.js (18+) with the TypeScript client,
// @skiplock/client (clients/typescript): `npm install` here links it.
//
// The library claims jobs of a queue with long polling, heartbeats with
// progress, and reports each job with its claimed attempt, so a report on
// an attempt the worker lost (its lease ran out) is refused with 409.
//
//   npm install
//   SKIPLOCK_SERVER=http://127.0.0.1:8080 SKIPLOCK_QUEUE=default node worker.mjs
//
// Environment: SKIPLOCK_SERVER, SKIPLOCK_TOKEN (a worker token, when the
// server has tokens), SKIPLOCK_QUEUE, SKIPLOCK_MAX_JOBS (stop after that many
// jobs; 0 = run until SIGTERM or SIGINT).
import { randomBytes } from "node:crypto";
import { PermanentError, Worker } from "@skiplock/client";

const MAX_JOBS = Number(process.env.SKIPLOCK_MAX_JOBS || "0");

// A span of this worker in the trace the job was enqueued in (W3C Trace
// Context): same trace id, a new span id. With OpenTelemetry, hand the job's
// traceparent to its propagator instead and start a span there.
function childTraceparent(job) {
  if (!job.traceparent) return null;
  const [version, traceId, , flags] = job.traceparent.split("-");
  return `${version}-${traceId}-${randomBytes(8).toString("hex")}-${flags}`;
}

const worker = new Worker({
  url: process.env.SKIPLOCK_SERVER || "http://127.0.0.1:8080",
  token: process.env.SKIPLOCK_TOKEN || undefined,
  queue: process.env.SKIPLOCK_QUEUE || "default",
  concurrency: 1,
});

let done = 0;
// The job's work: here, add the numbers of the payload.
worker.register("add", async (job) => {
  try {
    const numbers = job.payload.numbers;
    // Bad input will not get better with a retry: fail the job for good.
    if (!Array.isArray(numbers)) throw new PermanentError("payload.numbers must be a list");
    job.progress(50, "adding");
    await job.heartbeat();
    return { sum: numbers.reduce((a, b) => a + b, 0), worker: "node", traceparent: childTraceparent(job) };
  } finally {
    if (MAX_JOBS > 0 && ++done >= MAX_JOBS) worker.stop();
  }
});

await worker.run();
