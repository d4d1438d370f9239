/**
 * `npm run bench`: every performance goal of the issues, as ratios against a
 * floor measured in the same run. Exits non-zero if a goal is missed.
 */
import { report } from "./Harness.ts"
import * as cli from "./cli.ts"
import * as coordinator from "./coordinator.ts"
import * as listing from "./listing.ts"
import * as storage from "./storage.ts"

const suites: Record<string, () => Promise<ReadonlyArray<import("./Harness.ts").Goal>>> = {
  storage: storage.run,
  listing: listing.run,
  coordinator: coordinator.run,
  cli: cli.run
}

const only = process.argv[2]
let ok = true
for (const [name, run] of Object.entries(suites)) {
  if (only !== undefined && only !== name) continue
  console.log(`\n# ${name}`)
  ok = report(await run()) && ok
}
process.exitCode = ok ? 0 : 1
