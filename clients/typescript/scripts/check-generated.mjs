// src/generated/openapi.ts is what openapi-typescript makes of
// docs/openapi.yaml. `--write` writes it (npm run generate); without it,
// this fails when the committed file differs (npm run check:generated).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const spec = join(root, "../../docs/openapi.yaml");
const target = join(root, "src/generated/openapi.ts");
const cli = join(root, "node_modules/openapi-typescript/bin/cli.js");
// Defaults do not make a field required (a spec may leave out queue), and
// an object without properties (payload) takes any keys.
const flags = ["--default-non-nullable", "false", "--empty-objects-unknown"];

const dir = mkdtempSync(join(tmpdir(), "skiplock-openapi-"));
try {
  const out = join(dir, "openapi.ts");
  execFileSync(process.execPath, [cli, spec, "-o", out, ...flags], { stdio: ["ignore", "ignore", "inherit"] });
  const want = readFileSync(out, "utf8");
  if (process.argv.includes("--write")) {
    writeFileSync(target, want);
    console.log("wrote src/generated/openapi.ts from docs/openapi.yaml");
  } else if (want !== readFileSync(target, "utf8")) {
    console.error("src/generated/openapi.ts does not match docs/openapi.yaml: run `npm run generate` in clients/typescript and commit the file");
    process.exit(1);
  } else {
    console.log("src/generated/openapi.ts matches docs/openapi.yaml");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
