// The CLI build's banner (scripts/build.mjs), in a module of its own so a test
// (test/package/Banner.test.ts) can check it.
//
// Some bundled CommonJS dependencies call require(), which an ES module lacks: esbuild's banner
// gives every output file one, made from `createRequire(import.meta.url)` as the file loads. Of
// the 300 files of a build, fewer than twenty ever name `require`, and a command loads 27 to 55 of
// them: each made a `Module` object and its `node_modules` paths, read `import.meta`, and linked
// node:module, for nothing. Once the build has written them, `trimBanner` gives each file the
// banner it needs (docs/startup.md#what-a-run-no-longer-makes).

const SHEBANG = "#!/usr/bin/env node"
const REQUIRE = "import { createRequire as __cr } from 'node:module';const require = __cr(import.meta.url);"
// Made on first use: most runs never call it. Its properties (resolve, main, extensions, cache) are
// the real one's: esbuild writes a bundled `require.resolve(x)` as `__require.resolve(x)`, and
// `__require` is this require, reached from any chunk under a minified name no regex here can see.
const LAZY_REQUIRE =
  "import { createRequire as __cr } from 'node:module';let __rq;const __rqm=()=>__rq??=__cr(import.meta.url);" +
  "const require=Object.defineProperties(function(id){return __rqm()(id)},{" +
  ["resolve", "main", "extensions", "cache"].map((p) => `${p}:{get:()=>__rqm().${p}}`).join(",") +
  "});"

/** What esbuild puts at the top of every file of the CLI build. */
export const BANNER = `${SHEBANG}\n${REQUIRE}`

/**
 * `code` (a built file, starting with {@link BANNER}) with the banner it needs: a file that never
 * names `require` gets none; one that only calls it (esbuild's `__require` shim calls
 * `require.apply`) gets one made on its first use, which answers `__require.resolve` and the like
 * from other chunks too; any other use (`require.resolve`, …) keeps esbuild's. The shebang stays
 * on every file.
 */
export const trimBanner = (code) => {
  if (!code.startsWith(BANNER)) throw new Error("build: an output file does not start with the banner")
  const body = code.slice(BANNER.length)
  if (!/\brequire\b/.test(body)) return `${SHEBANG}\n${body}`
  if (/\brequire\s*\.\s*(?!apply\b)/.test(body)) return code
  return `${SHEBANG}\n${LAZY_REQUIRE}${body}`
}
