// Fails when the committed dist/ is not what the build makes of src/ now:
// run `npm run build` after changing src/ and commit dist/.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const tmp = mkdtempSync(join(tmpdir(), "skiplock-dist-"));

function files(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath ?? e.path, e.name)))
    .sort();
}

try {
  execFileSync(process.execPath, [join(root, "scripts/build.mjs"), "--out", tmp], { stdio: "inherit" });
  const want = files(tmp);
  const have = files(join(root, "dist"));
  const differ = [...new Set([...want, ...have])].filter((f) => {
    try {
      return readFileSync(join(tmp, f), "utf8") !== readFileSync(join(root, "dist", f), "utf8");
    } catch {
      return true;
    }
  });
  if (differ.length > 0) {
    console.error(`dist/ is not the build of src/ (${differ.join(", ")}): run \`npm run build\` in clients/typescript and commit dist/`);
    process.exit(1);
  }
  console.log("dist/ is the build of src/");
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
