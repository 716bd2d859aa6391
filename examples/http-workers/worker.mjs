// A Skiplock HTTP worker in Node.js (18+), no dependencies.
//
// It claims jobs of a queue with long polling, reports progress with a
// heartbeat, and completes each job with a result (or fails it). Every report
// carries the claimed job's attempt, so a report on an attempt the worker lost
// (its lease ran out) is refused with 409.
//
//   SKIPLOCK_SERVER=http://127.0.0.1:8080 SKIPLOCK_QUEUE=default node worker.mjs
//
// Environment: SKIPLOCK_SERVER, SKIPLOCK_TOKEN (a worker token, when the
// server has tokens), SKIPLOCK_QUEUE, SKIPLOCK_MAX_JOBS (stop after that many
// jobs; 0 = run forever).
import os from "node:os";
import { randomBytes } from "node:crypto";

const SERVER = (process.env.SKIPLOCK_SERVER || "http://127.0.0.1:8080").replace(/\/$/, "");
const TOKEN = process.env.SKIPLOCK_TOKEN || "";
const QUEUE = process.env.SKIPLOCK_QUEUE || "default";
const MAX_JOBS = Number(process.env.SKIPLOCK_MAX_JOBS || "0");
const WORKER_ID = `${os.hostname()}-${process.pid}-node`;

async function call(path, body) {
  const headers = { "Content-Type": "application/json" };
  if (TOKEN) headers.Authorization = `Bearer ${TOKEN}`;
  const res = await fetch(SERVER + path, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await res.json();
  if (!res.ok) throw new Error(`HTTP ${res.status}: ${JSON.stringify(answer)}`);
  return answer;
}

// The job's work: here, add the numbers of the payload.
// A span of this worker in the trace the job was enqueued in (W3C Trace
// Context): same trace id, a new span id. With OpenTelemetry, hand the job's
// traceparent to its propagator instead and start a span there.
function childTraceparent(job) {
  if (!job.traceparent) return null;
  const [version, traceId, , flags] = job.traceparent.split("-");
  return `${version}-${traceId}-${randomBytes(8).toString("hex")}-${flags}`;
}

async function work(job) {
  const numbers = job.payload.numbers;
  if (!Array.isArray(numbers)) throw new TypeError("payload.numbers must be a list");
  await call(`/v1/jobs/${job.id}/heartbeat`, {
    worker_id: WORKER_ID, attempt: job.attempt, progress: 50, progress_message: "adding",
  });
  return { sum: numbers.reduce((a, b) => a + b, 0), worker: "node", traceparent: childTraceparent(job) };
}

let done = 0;
while (MAX_JOBS === 0 || done < MAX_JOBS) {
  const { jobs } = await call(`/v1/queues/${QUEUE}/claim`, { worker_id: WORKER_ID, max: 1, wait_seconds: 30 });
  for (const job of jobs) {
    try {
      const result = await work(job);
      await call(`/v1/jobs/${job.id}/complete`, { worker_id: WORKER_ID, attempt: job.attempt, result });
    } catch (e) {
      await call(`/v1/jobs/${job.id}/fail`, {
        worker_id: WORKER_ID, attempt: job.attempt, error: { type: e.name, message: e.message }, retryable: false,
      });
    }
    done++;
  }
}
