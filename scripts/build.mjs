// Bundles the CLI with esbuild: one ESM entry (dist/parley.mjs) plus lazily
// loaded chunks (the LLM SDKs are only imported on paths that call a model),
// because an unbundled Effect CLI starts ~9x slower than `node -e 0`.
import { build } from "esbuild"
import { chmodSync, rmSync } from "node:fs"

rmSync("dist", { recursive: true, force: true })
await build({
  entryPoints: { parley: "src/bin.ts" },
  outdir: "dist",
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
chmodSync("dist/parley.mjs", 0o755)
