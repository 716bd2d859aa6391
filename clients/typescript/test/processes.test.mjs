// Worker processes against a real server: kill -9 mid-job, 20,000 jobs
// through 4 processes, and a server restart in the middle of a run.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SkiplockError } from "../dist/esm/index.js";
import { client, jobsOf, liveCount, startWorker, uniqueQueue, until } from "./helpers.mjs";

test("kill -9 of a worker mid-job: the job runs again after its lease; the dead worker's late report is refused", async () => {
  const queue = uniqueQueue("kill");
  const job = await client.enqueue("slow", {}, { queue });
  const dead = startWorker({ QUEUE: queue, LEASE: "2", WORKER_ID: `dead-${queue}` });
  await until("the job started", () => dead.started.length > 0);
  dead.child.kill("SIGKILL");
  await dead.exited;
  const killedAt = Date.now();
  const next = startWorker({ QUEUE: queue, LEASE: "2" });
  try {
    await until("the job started again", () => next.started.length > 0);
    assert.deepEqual(next.started[0], [job.id, 2]);
    assert.ok(Date.now() - killedAt >= 1000, "it ran again only after the lease");
    await client.cancel(job.id);
    await until("cancelled", async () => (await client.get(job.id)).state === "cancelled");
  } finally {
    next.child.kill("SIGTERM");
    await next.exited;
  }
  await assert.rejects(client.complete(job.id, `dead-${queue}`, { attempt: 1, result: { late: true } }), (e) => {
    assert.ok(e instanceof SkiplockError);
    assert.equal(e.status, 409);
    assert.equal(e.code, "conflict");
    return true;
  });
  const results = await client.completeMany(`dead-${queue}`, [{ id: job.id, attempt: 1 }]);
  assert.equal(results[0].ok, false);
  assert.equal(results[0].error.code, "conflict");
  const j = await client.get(job.id);
  assert.equal(j.result, null);
  assert.equal(j.errors[0].type, "lease_expired");
});

// checkRuns fails on a job run twice unless a later attempt ran it, which
// only an expired lease (or a lost claim answer) gives.
function checkRuns(workers, jobs, { sameAttemptOnce }) {
  const runs = new Map();
  for (const w of workers) {
    for (const [id, attempt] of w.runs) {
      const seen = runs.get(id) ?? [];
      if (seen.includes(attempt)) assert.fail(`job ${id} attempt ${attempt} ran twice`);
      runs.set(id, [...seen, attempt]);
    }
  }
  for (const [id, j] of jobs) {
    assert.equal(j.state, "completed", `job ${id}`);
    const seen = runs.get(id);
    assert.ok(seen, `job ${id} completed but no worker printed its run`);
    if (sameAttemptOnce) assert.deepEqual(seen, [1], `job ${id} ran ${JSON.stringify(seen)}`);
    else assert.ok(Math.max(...seen) === j.attempt, `job ${id} completed at attempt ${j.attempt}, runs ${JSON.stringify(seen)}`);
  }
}

async function enqueueNoops(queue, n, kind = "noop") {
  for (let i = 0; i < n; i += 10_000) {
    const size = Math.min(10_000, n - i);
    await client.enqueueMany(Array.from({ length: size }, (_, k) => ({ kind, queue, payload: { n: i + k } })));
  }
}

async function stopAll(workers) {
  for (const w of workers) w.child.kill("SIGTERM");
  const exits = await Promise.all(workers.map((w) => w.exited));
  for (const e of exits) assert.equal(e.code, 0, `a worker exited ${JSON.stringify(e)}`);
}

test("20,000 jobs through 4 worker processes: none lost, none run twice", async () => {
  const queue = uniqueQueue("load");
  const n = 20_000;
  await enqueueNoops(queue, n);
  const workers = Array.from({ length: 4 }, () => startWorker({ QUEUE: queue, CONCURRENCY: "200", BATCH: "200", LEASE: "60" }));
  try {
    await until("all finished", async () => (await liveCount(queue)) === 0, 100_000);
  } finally {
    await stopAll(workers);
  }
  const jobs = await jobsOf(queue);
  assert.equal(jobs.size, n);
  checkRuns(workers, jobs, { sameAttemptOnce: true });
});

test("a server restart in the middle of a run loses nothing", { skip: !process.env.SKIPLOCK_CONTROL_URL && "no SKIPLOCK_CONTROL_URL" }, async () => {
  const queue = uniqueQueue("restart");
  const n = 3000;
  await enqueueNoops(queue, n, "sleepy");
  const workers = Array.from({ length: 2 }, () => startWorker({ QUEUE: queue, CONCURRENCY: "50", BATCH: "50", LEASE: "3" }));
  try {
    await until("a fifth done", async () => workers.reduce((a, w) => a + w.runs.length, 0) >= n / 5);
    const r = await fetch(process.env.SKIPLOCK_CONTROL_URL + "/restart", { method: "POST" });
    assert.equal(r.status, 200, await r.text());
    await until("all finished", async () => (await liveCount(queue).catch(() => -1)) === 0, 90_000);
  } finally {
    await stopAll(workers);
  }
  const jobs = await jobsOf(queue);
  assert.equal(jobs.size, n);
  checkRuns(workers, jobs, { sameAttemptOnce: false });
});
