// What the tests share: the server's URL (given by typescript_test.go),
// unique queue names, worker processes, and waiting.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "../dist/esm/index.js";

export const url = process.env.SKIPLOCK_URL;
if (!url) throw new Error("SKIPLOCK_URL is not set: run these tests through `go test ./clients/typescript`, which starts a server");

export const client = new Client({ url, logLevel: "warn" });

export function uniqueQueue(name) {
  return `${name}-${randomBytes(4).toString("hex")}`;
}

const here = dirname(fileURLToPath(import.meta.url));

/** A worker process (fixtures/worker.mjs): the jobs it ran and started ([id, attempt]), and its exit. */
export function startWorker(env) {
  const child = spawn(process.execPath, [join(here, "fixtures/worker.mjs")], {
    env: { ...process.env, SKIPLOCK_URL: url, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const w = { child, runs: [], started: [], ready: undefined, exited: new Promise((r) => child.on("exit", (code, sig) => r({ code, sig }))) };
  let buf = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d) => {
    buf += d;
    const lines = buf.split("\n");
    buf = lines.pop();
    for (const line of lines) {
      const [what, a, b] = line.split(" ");
      if (what === "run") w.runs.push([Number(a), Number(b)]);
      if (what === "started") w.started.push([Number(a), Number(b)]);
      if (what === "ready") w.ready = a;
    }
  });
  return w;
}

/** Waits until cond() is true, checking every 50 ms, or fails after ms. */
export async function until(what, cond, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every job of a queue, by id. */
export async function jobsOf(queue) {
  const all = new Map();
  for await (const j of client.jobs({ queue, limit: 1000 })) all.set(j.id, j);
  return all;
}

/** How many live jobs (not completed, failed or cancelled) a queue holds. */
export async function liveCount(queue) {
  const q = (await client.queues()).find((x) => x.name === queue);
  return q ? Object.values(q.counts ?? {}).reduce((a, b) => a + b, 0) : 0;
}
