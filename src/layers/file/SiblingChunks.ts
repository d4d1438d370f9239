/**
 * How the built `parley` resolves its chunks' imports of one another
 * (docs/startup.md#what-a-run-no-longer-makes): an import of `./NAME.mjs`
 * from a module of the entry's own directory is that directory's file,
 * handed to Node through an in-thread resolve hook (`module.registerHooks`,
 * Node ≥ 22.15 and 23.5), not looked up by Node's resolver.
 *
 * Why: the build splits the command tree's code into chunks (esbuild), and a
 * command of it (`conversation check`, `serve`) links dozens of them through
 * several hundred imports (`print` did, before the fast paths became scripts
 * of their own: `CodeCache.ts`). For
 * each import Node's ES module resolver parses URLs, `realpath`s the file and
 * `stat`s it: a sixth of `print`'s time in a CPU profile (~12 ms) went there.
 * The answer is known without the file system: the build writes every chunk
 * as a plain file of `dist/`, beside the entry, and the entry's own URL is
 * already a real path (Node resolves the main script's links, so a
 * `node_modules/.bin/parley` link leads here as the file itself).
 *
 * Anything else — a built-in, a package, a path with a directory in it, a
 * module outside that directory (a hook of the person's, an `--import`) —
 * goes on to Node's resolver as before. Under tsx (the sources, `.ts`), and on
 * a Node without `registerHooks`, nothing is registered.
 *
 * @example
 * ```ts
 * import * as SiblingChunks from "parley/layers/file/SiblingChunks"
 * SiblingChunks.sibling("./chunk-AB12.mjs", "file:///opt/parley/dist/parley.mjs", "file:///opt/parley/dist/")
 * // "file:///opt/parley/dist/chunk-AB12.mjs"
 * SiblingChunks.enable(import.meta.url) // true when the hook is in place
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as nodeModule from "node:module"

/** A file of the same directory: `./` and a name with no further `/`, ending `.mjs`. */
const SIBLING = /^\.\/[^/]+\.mjs$/

/**
 * The URL `specifier` names when `parent` is a module of `directory` (a
 * `file:` URL ending in `/`) and the specifier is a sibling `.mjs` file;
 * `undefined` otherwise (Node's resolver answers).
 */
export const sibling = (specifier: string, parent: string | undefined, directory: string): string | undefined =>
  parent?.startsWith(directory) && parent.indexOf("/", directory.length) < 0 && SIBLING.test(specifier)
    ? directory + specifier.slice(2)
    : undefined

/**
 * Registers the hook for the chunks beside `entry` (the built entry's
 * `import.meta.url`); false when it is not a built `.mjs` file or Node has no
 * in-thread hooks.
 */
export const enable = (entry: string): boolean => {
  // Declared by @types/node, absent before Node 22.15 / 23.5: a namespace's missing export reads `undefined`.
  const register: typeof nodeModule.registerHooks | undefined = nodeModule.registerHooks
  if (register === undefined || !entry.startsWith("file:") || !entry.endsWith(".mjs")) return false
  const directory = new URL("./", entry).href
  register({
    resolve: (specifier, context, next) => {
      const url = sibling(specifier, context.parentURL, directory)
      return url === undefined ? next(specifier, context) : { url, format: "module", shortCircuit: true }
    }
  })
  return true
}
