/**
 * `parley/ai`: the bridge between parley and `effect/ai` (issue 12).
 * Empty for now: it lands with that issue. The entry exists so the package's
 * `exports` map is final and consumers can already depend on the subpath.
 */
export {}
