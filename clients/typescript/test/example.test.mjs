// examples/http-workers/worker.mjs, a worker on this library, against a real server.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { client, uniqueQueue, url } from "./helpers.mjs";

const script = join(dirname(fileURLToPath(import.meta.url)), "../../../examples/http-workers/worker.mjs");

const installed = existsSync(join(dirname(script), "node_modules/@skiplock/client"));

test("examples/http-workers/worker.mjs works a good and a bad job", { skip: !installed && "run npm ci in examples/http-workers first" }, async () => {
  const queue = uniqueQueue("example");
  const good = await client.enqueue("add", { numbers: [1, 2, 3.5] }, { queue, traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" });
  const bad = await client.enqueue("add", { numbers: "x" }, { queue });
  await promisify(execFile)(process.execPath, [script], {
    env: { ...process.env, SKIPLOCK_SERVER: url, SKIPLOCK_QUEUE: queue, SKIPLOCK_MAX_JOBS: "2" },
    timeout: 60_000,
  });
  const g = await client.get(good.id);
  assert.equal(g.state, "completed");
  assert.equal(g.result.sum, 6.5);
  assert.equal(g.result.worker, "node");
  assert.equal(g.progress_message, "adding");
  assert.match(g.result.traceparent, /^00-4bf92f3577b34da6a3ce929d0e0e4736-/);
  assert.doesNotMatch(g.result.traceparent, /00f067aa0ba902b7/);
  const b = await client.get(bad.id);
  assert.equal(b.state, "failed");
  assert.equal(b.errors.length, 1);
  assert.equal(b.errors[0].retryable, false);
});
