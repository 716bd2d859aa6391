// Builds dist/esm (ES modules) and dist/cjs (CommonJS), each with its .d.ts,
// or into --out DIR. dist/ is committed, so that installing the package
// from a clone (npm install ./clients/typescript) needs no build; with
// --if-possible (npm's prepack) a clone without typescript keeps it.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? resolve(args[outAt + 1]) : join(root, "dist");
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
} catch (err) {
  if (args.includes("--if-possible") && existsSync(join(out, "esm/index.js"))) {
    console.log("typescript is not installed: keeping the built dist/");
    process.exit(0);
  }
  throw err;
}
rmSync(out, { recursive: true, force: true });
// The CommonJS build skips the type check the first one made.
for (const [project, dir, ...flags] of [["tsconfig.json", "esm"], ["tsconfig.cjs.json", "cjs", "--noCheck"]]) {
  execFileSync(process.execPath, [tsc, "-p", join(root, project), "--outDir", join(out, dir), ...flags], { stdio: "inherit", cwd: root });
}
// dist/cjs's .js files are CommonJS although the package is "type": "module".
mkdirSync(join(out, "cjs"), { recursive: true });
writeFileSync(join(out, "cjs/package.json"), '{"type": "commonjs"}\n');
