// No-op jobs a second through one worker process with batch claims, against
// a running server (a benchmark, not a test):
//
//   skiplock serve &
//   node bench.mjs [--url http://127.0.0.1:8080] [--jobs 50000] [--concurrency 1000] [--batch 1000]
//
// It enqueues the jobs first (10,000 a call) into a queue of its own, then
// times one Worker from its start until every job's completion is stored.
import { parseArgs } from "node:util";
import { randomBytes } from "node:crypto";
import { Client, Worker } from "./dist/esm/index.js";

const { values: o } = parseArgs({
  options: {
    url: { type: "string", default: process.env.SKIPLOCK_URL ?? "http://127.0.0.1:8080" },
    token: { type: "string", default: process.env.SKIPLOCK_TOKEN },
    jobs: { type: "string", default: "50000" },
    concurrency: { type: "string", default: "1000" },
    batch: { type: "string", default: "1000" },
  },
});
const n = Number(o.jobs);
const client = new Client({ url: o.url, token: o.token, logLevel: "warn" });
const queue = `bench-${randomBytes(4).toString("hex")}`;

for (let i = 0; i < n; i += 10_000) {
  const size = Math.min(10_000, n - i);
  await client.enqueueMany(Array.from({ length: size }, () => ({ kind: "noop", queue })));
}

let ran = 0;
const worker = new Worker({
  client,
  queue,
  concurrency: Number(o.concurrency),
  batchSize: Number(o.batch),
  waitSeconds: 1,
  handlers: { noop: () => { ran++; } },
});
const start = performance.now();
const cpu = process.cpuUsage();
const run = worker.run({ stopOn: [] });
while (ran < n) await new Promise((r) => setTimeout(r, 5));
// Every job ran; the last completions are stored when the drain ends.
await worker.stop();
await run;
const seconds = (performance.now() - start) / 1000;
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
const left = (await client.list({ queue, state: ["pending", "running"], limit: 1 })).jobs.length;
console.log(`${n} no-op jobs in ${seconds.toFixed(2)} s: ${Math.round(n / seconds)} jobs/s (one worker process, concurrency ${o.concurrency}, claims of ${o.batch}; ${left ? "NOT ALL COMPLETED" : "all completed"}); this process used ${cpuSeconds.toFixed(2)} s of CPU`);
