// The Client against a real server: enqueue, read, list with the cursor
// iterator, act on jobs, bulk, workflows, schedules, and typed errors.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";
import { Client, ConnectionError, SkiplockError } from "../dist/esm/index.js";
import { client, uniqueQueue } from "./helpers.mjs";

test("enqueue one and many, get, duplicates", async () => {
  const queue = uniqueQueue("enq");
  const runAt = new Date(Date.now() + 3600_000);
  const j = await client.enqueue("email", { to: "a@example.com" }, {
    queue, priority: 7, idempotency_key: `k-${queue}`, metadata: { customer: "acme" }, tags: ["t1"], run_at: runAt,
  });
  assert.equal(j.state, "scheduled");
  assert.equal(j.priority, 7);
  assert.equal(j.duplicate, false);
  assert.equal(Date.parse(j.run_at), runAt.getTime());
  const dup = await client.enqueue("email", {}, { queue, idempotency_key: `k-${queue}` });
  assert.equal(dup.duplicate, true);
  assert.equal(dup.id, j.id);
  const many = await client.enqueueMany([
    { kind: "a", queue, payload: { n: 1 } },
    { kind: "b", queue, delay_seconds: 60 },
  ]);
  assert.deepEqual(many.map((x) => [x.kind, x.state]), [["a", "pending"], ["b", "scheduled"]]);
  const got = await client.get(many[0].id);
  assert.deepEqual(got.payload, { n: 1 });
  const child = await client.enqueue("c", {}, { queue, depends_on: [many[0].id] });
  assert.equal(child.state, "waiting");
});

test("typed errors carry code, field and status", async () => {
  await assert.rejects(client.enqueue("x", {}, { priority: 11 }), (e) => {
    assert.ok(e instanceof SkiplockError);
    assert.equal(e.status, 400);
    assert.equal(e.code, "invalid_argument");
    assert.equal(e.field, "priority");
    assert.equal(e.retryable, false);
    return true;
  });
  await assert.rejects(client.enqueueMany([{ kind: "ok" }, { kind: "bad", run_at: "nope" }]), (e) => e.field === "jobs[1].run_at");
  await assert.rejects(client.get(999_999_999), (e) => e.status === 404 && e.code === "not_found");
  await assert.rejects(client.retry((await client.enqueue("x", {}, { queue: uniqueQueue("err") })).id), (e) => e.status === 409 && e.code === "conflict");
  const nobody = new Client({ url: "http://127.0.0.1:1", logLevel: "silent" });
  await assert.rejects(nobody.get(1), (e) => e instanceof ConnectionError && e.status === 0 && e.retryable);
  // A server that takes the connection and never answers.
  const silent = createServer(() => {});
  await new Promise((r) => silent.listen(0, "127.0.0.1", r));
  try {
    const slow = new Client({ url: `http://127.0.0.1:${silent.address().port}`, timeoutMs: 200, logLevel: "silent" });
    await assert.rejects(slow.get(1), (e) => e instanceof ConnectionError && e.code === "timeout");
  } finally {
    silent.closeAllConnections();
    silent.close();
  }
  assert.throws(() => new Client({ url: "ftp://x" }), /http/);
});

test("list pages with a cursor and iterates every job", async () => {
  const queue = uniqueQueue("list");
  const made = await client.enqueueMany(Array.from({ length: 25 }, (_, i) => ({ kind: i % 2 ? "odd" : "even", queue, tags: ["x"], metadata: { i }, payload: { order: { n: i } } })));
  const page = await client.list({ queue, limit: 10 });
  assert.equal(page.jobs.length, 10);
  assert.notEqual(page.nextCursor, "");
  assert.equal(page.jobs[0].id, made[24].id, "newest first");
  const ids = [];
  for await (const j of client.jobs({ queue, limit: 7 })) ids.push(j.id);
  assert.deepEqual(ids, made.map((j) => j.id).reverse());
  let odd = 0;
  for await (const j of client.jobs({ queue, kind: "odd", state: ["pending", "running"], tag: "x" })) odd += j.kind === "odd" ? 1 : 0;
  assert.equal(odd, 12);
  const meta = await client.list({ queue, metadata: { i: 3 } });
  assert.deepEqual(meta.jobs.map((j) => j.id), [made[3].id]);
  const byPayload = await client.list({ queue, payload: { "order.n": 4 } });
  assert.deepEqual(byPayload.jobs.map((j) => j.id), [made[4].id]);
  assert.deepEqual((await client.list({ queue, error_message: "never" })).jobs, []);
});

test("cancel, pause, resume, retry and bulk", async () => {
  const queue = uniqueQueue("act");
  const j = await client.enqueue("x", {}, { queue });
  assert.equal((await client.pause(j.id)).state, "paused");
  assert.equal((await client.resume(j.id)).state, "pending");
  assert.equal((await client.cancel(j.id)).state, "cancelled");
  assert.equal((await client.retry(j.id)).state, "pending");
  await client.enqueueMany([{ kind: "y", queue }, { kind: "y", queue }]);
  const dry = await client.bulk("cancel", { queue: [queue], kind: ["y"] }, { dryRun: true });
  assert.deepEqual([dry.matched, dry.done], [2, 0]);
  const byID = await client.bulk("cancel", { ids: [String(j.id)], payload: { a: 1 } }, { dryRun: true });
  assert.equal(byID.matched, 0);
  const done = await client.bulk("cancel", { queue: [queue], kind: ["y"] });
  assert.equal(done.done, 2);
  await assert.rejects(client.bulk("cancel", {}), (e) => e.field === "filter");
});

test("workflows, schedules and queues", async () => {
  const queue = uniqueQueue("wf");
  const wf = `wf-${queue}`;
  await client.enqueueMany([{ kind: "s1", queue, workflow_id: wf, stage: "one" }, { kind: "s2", queue, workflow_id: wf, stage: "two" }]);
  const w = await client.workflow(wf);
  assert.equal(w.state, "running");
  assert.equal(w.jobs.length, 2);
  const key = `sched-${queue}`;
  const s = await client.putSchedule(key, { kind: "tick", queue, every_seconds: 3600, next_run_at: new Date(Date.now() + 3600_000) });
  assert.equal(s.key, key);
  assert.ok((await client.schedules()).some((x) => x.key === key));
  await client.deleteSchedule(key);
  await assert.rejects(client.deleteSchedule(key), (e) => e.status === 404);
  const q = await client.pauseQueue(queue);
  assert.equal(q.paused, true);
  assert.equal((await client.resumeQueue(queue)).paused, false);
  assert.ok((await client.queues()).some((x) => x.name === queue));
  assert.equal((await client.health()).status, "ok");
  assert.ok(Array.isArray((await client.kinds()).kinds));
  assert.ok((await client.stats()).totals);
});
