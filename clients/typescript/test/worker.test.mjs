// The Worker in this process against a real server: results, retries with
// the kind's backoff, permanent failures, snoozes, cancel and pause
// reaching a running handler, and a shutdown that drains.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Client, JobInterrupted, PermanentError, Worker, snooze } from "../dist/esm/index.js";
import { client, uniqueQueue, until, url } from "./helpers.mjs";

function worker(queue, handlers, options = {}) {
  return new Worker({ client, queue, handlers, waitSeconds: 1, backoff: { initialMs: 50, maxMs: 500 }, stopOn: [], ...options });
}

test("enqueue, work, completed with its result, progress and checkpoint", async () => {
  const queue = uniqueQueue("ok");
  const job = await client.enqueue("add", { numbers: [1, 2, 3.5] }, { queue });
  const w = worker(queue, {
    add: async (j) => {
      j.progress(50, "adding");
      j.saveCheckpoint({ half: true });
      const hb = await j.heartbeat();
      assert.equal(hb.cancel_requested, false);
      return { sum: j.payload.numbers.reduce((a, b) => a + b, 0) };
    },
  });
  const run = w.run({ stopOn: [] });
  const done = await until("completed", async () => {
    const j = await client.get(job.id);
    return j.state === "completed" && j;
  });
  await w.stop();
  await run;
  assert.deepEqual(done.result, { sum: 6.5 });
  assert.equal(done.progress_message, "adding");
  assert.equal(done.attempt, 1);
});

test("a handler that throws is retried after the kind's backoff, then failed", async () => {
  const queue = uniqueQueue("flaky");
  // The server's contracts give kind "flaky" max_retries 2 and a fixed 1 s backoff.
  const job = await client.enqueue("flaky", {}, { queue });
  const seen = [];
  const w = worker(queue, {
    flaky: (j) => {
      seen.push([j.attempt, Date.now()]);
      throw new TypeError(`boom ${j.attempt}`);
    },
  });
  const run = w.run();
  const failed = await until("failed", async () => {
    const j = await client.get(job.id);
    return j.state === "failed" && j;
  });
  await w.stop();
  await run;
  assert.deepEqual(seen.map((s) => s[0]), [1, 2, 3]);
  assert.deepEqual(failed.errors.map((e) => [e.attempt, e.type, e.message, e.retryable]), [
    [1, "TypeError", "boom 1", true], [2, "TypeError", "boom 2", true], [3, "TypeError", "boom 3", false],
  ], "the last attempt has no retry left");
  for (let i = 1; i < seen.length; i++) {
    // The backoff is a lower bound of the wait between attempts.
    assert.ok(seen[i][1] - seen[i - 1][1] >= 900, `attempt ${i + 1} came ${seen[i][1] - seen[i - 1][1]} ms after the one before`);
  }
});

test("a permanent error fails at once; a snooze runs the job again later", async () => {
  const queue = uniqueQueue("perm");
  const perm = await client.enqueue("perm", {}, { queue });
  const sn = await client.enqueue("sn", {}, { queue });
  const w = worker(queue, {
    perm: () => { throw new PermanentError("bad input"); },
    sn: (j) => {
      if (j.attempt === 1) throw snooze(1);
      return { second: j.attempt };
    },
  });
  const run = w.run();
  await until("finished", async () => (await client.get(perm.id)).state === "failed" && (await client.get(sn.id)).state === "completed");
  await w.stop();
  await run;
  const p = await client.get(perm.id);
  assert.deepEqual([p.attempt, p.errors.length, p.errors[0].retryable], [1, 1, false]);
  const s = await client.get(sn.id);
  assert.deepEqual(s.result, { second: 2 });
  assert.equal(s.errors[0].type, "snooze");
});

test("cancel and pause reach the running handler as an aborted signal", async () => {
  const queue = uniqueQueue("intr");
  const reasons = new Map();
  const resumed = [];
  const w = worker(queue, {
    long: async (j) => {
      if (j.checkpoint) {
        resumed.push(j.checkpoint);
        return { resumed: j.checkpoint };
      }
      await new Promise((resolve) => j.signal.addEventListener("abort", resolve, { once: true }));
      reasons.set(j.id, j.signal.reason);
      j.saveCheckpoint({ step: 7 });
      throw j.signal.reason;
    },
  }, { leaseSeconds: 3 });
  const run = w.run();
  const c = await client.enqueue("long", {}, { queue });
  const p = await client.enqueue("long", {}, { queue });
  await until("both running", async () => (await client.get(c.id)).state === "running" && (await client.get(p.id)).state === "running");
  await client.cancel(c.id);
  await client.pause(p.id);
  await until("cancelled and paused", async () => (await client.get(c.id)).state === "cancelled" && (await client.get(p.id)).state === "paused");
  assert.ok(reasons.get(c.id) instanceof JobInterrupted);
  assert.equal(reasons.get(c.id).reason, "cancel");
  assert.equal(reasons.get(p.id).reason, "pause");
  const paused = await client.get(p.id);
  assert.deepEqual(paused.checkpoint, { step: 7 });
  await client.resume(p.id);
  const done = await until("resumed and completed", async () => {
    const j = await client.get(p.id);
    return j.state === "completed" && j;
  });
  await w.stop();
  await run;
  assert.deepEqual(done.result, { resumed: { step: 7 } });
  assert.equal(done.attempt, 1, "a paused attempt is not spent");
});

test("stop drains running jobs; past the deadline they are handed back pending", async () => {
  const queue = uniqueQueue("drain");
  const quick = await client.enqueue("quick", {}, { queue });
  const stuck = await client.enqueue("stuck", {}, { queue });
  let started = 0;
  const w = worker(queue, {
    quick: async () => { started++; await new Promise((r) => setTimeout(r, 300)); return { ok: 1 }; },
    stuck: async (j) => {
      started++;
      await new Promise((r) => setTimeout(r, 5000));
      return { late: j.signal.aborted };
    },
  }, { drainTimeoutMs: 800 });
  const run = w.run();
  await until("both started", () => started === 2);
  await w.stop();
  await run;
  assert.equal((await client.get(quick.id)).state, "completed");
  const s = await client.get(stuck.id);
  assert.equal(s.state, "pending");
  assert.equal(s.errors.at(-1).type, "shutdown");
});

test("a claim the server refuses stops the worker with the error", async () => {
  const w = worker(uniqueQueue("bad"), { x: () => 1 }, { batchSize: 5, concurrency: 5, leaseSeconds: 1e12 });
  await assert.rejects(w.run(), (e) => e.code === "invalid_argument" && e.field === "lease_seconds");
});

test("every report names the job's queue: heartbeats, failures and completions, carried or on their own", async () => {
  const queue = uniqueQueue("reports");
  const sent = [];
  const recording = new Client({
    url,
    logLevel: "warn",
    fetch: (u, init) => {
      const path = new URL(u).pathname;
      if (/\/(heartbeat|complete|fail|claim)$/.test(path)) sent.push([path, JSON.parse(init.body)]);
      return fetch(u, init);
    },
  });
  const jobs = [
    await client.enqueue("beat", {}, { queue }),
    await client.enqueue("bad", {}, { queue }),
    await client.enqueue("ok", {}, { queue }),
  ];
  const w = worker(queue, {
    beat: async (j) => {
      await j.heartbeat();
      return 1;
    },
    bad: () => {
      throw new PermanentError(new Error("no"));
    },
    ok: () => 2,
  }, { client: recording, flushDelayMs: 0 });
  const run = w.run();
  for (const job of jobs) {
    await until(`job ${job.id} finished`, async () => ["completed", "failed"].includes((await client.get(job.id)).state));
  }
  await w.stop();
  await run;
  const kinds = new Set();
  for (const [path, body] of sent) {
    const batch = path.endsWith("/claim") || path === "/v1/jobs/complete";
    const items = batch ? (body.complete ?? body.jobs ?? []) : [body];
    for (const it of items) {
      assert.equal(it.queue, queue, `${path}: ${JSON.stringify(it)}`);
      kinds.add(batch ? "batch" : path.split("/").pop());
    }
  }
  assert.deepEqual([...kinds].sort(), ["batch", "fail", "heartbeat"], JSON.stringify(sent));
});
