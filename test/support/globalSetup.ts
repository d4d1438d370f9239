// Builds dist/parley.mjs once per test run so end-to-end tests exercise the
// shipped bundle, not the sources.
import { execFileSync } from "node:child_process"
import { repoRoot } from "./Fixtures.ts"

export default function setup(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: repoRoot, stdio: "inherit" })
}
