// The ES module and the CommonJS builds both load and export the same names.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

test("ESM and CJS builds load", async () => {
  const esm = await import("@skiplock/client");
  const cjs = createRequire(import.meta.url)("@skiplock/client");
  assert.deepEqual(Object.keys(cjs).sort(), Object.keys(esm).sort());
  for (const m of [esm, cjs]) {
    const c = new m.Client({ url: "http://127.0.0.1:8080", logLevel: "silent" });
    assert.equal(c.url, "http://127.0.0.1:8080");
    assert.ok(new m.SkiplockError(409, "conflict", "x") instanceof Error);
  }
  assert.notEqual(esm.Client, cjs.Client, "two builds, not one loaded twice");
});
