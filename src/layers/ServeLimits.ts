/**
 * The bounds of one `parley serve` server and their defaults, apart from the
 * server code (`serve/Limits.ts`): `serve`'s flags are parsed at every start-up,
 * and the HTTP server is loaded by `serve` alone (docs/decisions.md#fast-start).
 *
 * @example
 * ```ts
 * import * as ServeLimits from "parley/layers/ServeLimits"
 * ServeLimits.defaults.maxConnections // 512
 * ```
 *
 * @since 0.1.0
 */

/** What bounds one server. */
export interface Limits {
  /** Connections open at once. */
  readonly maxConnections: number
  /** From a request's first byte (or a connection's opening) to the end of its headers. */
  readonly headersTimeoutMs: number
  /** From a request's first byte to the end of its body. */
  readonly bodyTimeoutMs: number
}

/** Above the 300 idle connections a flood may hold (`npm run bench`), below a 1,024-descriptor limit. */
export const defaults: Limits = { maxConnections: 512, headersTimeoutMs: 10_000, bodyTimeoutMs: 30_000 }
