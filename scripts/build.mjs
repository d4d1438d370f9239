// Bundles the CLI with esbuild: one ESM entry (dist/parley.mjs) plus lazily
// loaded chunks (the LLM SDKs are only imported on paths that call a model),
// because an unbundled Effect CLI starts ~9x slower than `node -e 0`.
// The bundle is built in a scratch folder and each file renamed into dist/,
// so a parley process started during a rebuild never sees a half-written file.
import { build } from "esbuild"
import { chmodSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs"
import * as path from "node:path"

const scratch = path.join("dist", `.build-${process.pid}`)
mkdirSync(scratch, { recursive: true })
try {
  await build({
    entryPoints: { parley: "src/bin.ts" },
    outdir: scratch,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    sourcemap: false,
    legalComments: "none",
    logLevel: "warning",
    banner: {
      // Some bundled CommonJS dependencies call require(); give ESM one.
      js: "#!/usr/bin/env node\nimport { createRequire as __cr } from 'node:module';const require = __cr(import.meta.url);"
    }
  })
  chmodSync(path.join(scratch, "parley.mjs"), 0o755)
  // Chunks first, the entry last: a new entry never points at a missing chunk.
  const files = readdirSync(scratch).sort((a, b) => (a === "parley.mjs" ? 1 : b === "parley.mjs" ? -1 : 0))
  for (const f of files) renameSync(path.join(scratch, f), path.join("dist", f))
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
