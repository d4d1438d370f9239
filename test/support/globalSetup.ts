// Builds dist/parley.mjs once per test run so end-to-end tests exercise the
// shipped bundle, not the sources.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { binary, bundle } from "./Cli.ts"
import { repoRoot } from "./Fixtures.ts"

export default function setup(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: repoRoot, stdio: "inherit" })
  // The bin link npm would make for an installed parley (see Cli.binary).
  fs.mkdirSync(path.dirname(binary), { recursive: true })
  fs.rmSync(binary, { force: true })
  fs.symlinkSync(path.relative(path.dirname(binary), bundle), binary)
}
