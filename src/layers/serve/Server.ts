/**
 * `parley serve` once its flags are read (docs/serve.md): the API (`Api.ts`), the
 * page (`Pages.ts`) and the guard in front of both (`Guard.ts`), on Effect's
 * HTTP server over Node's. The first line on stdout is the address with the
 * token; a host other than loopback is warned about on stderr. The server
 * lives until the process is interrupted (Ctrl-C, SIGTERM): then it stops
 * listening and closes its connections. Its failures are data (the store's
 * errors, `NotPrivate`, {@link TokenUnavailable}): the CLI renders them.
 *
 * Loaded only by `parley serve` (`cli/Serve.ts` imports it lazily): the
 * other commands start without the HTTP code.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as Server from "parley/layers/serve/Server"
 * const program = Effect.gen(function* () {
 *   yield* Server.run({ storage: "/home/me/.parley", host: "127.0.0.1", port: 3141 })
 * })
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Schema from "effect/Schema"
import { NotPrivate } from "../../domain/storage/NotPrivate.ts"
import * as Storage from "../../domain/storage/Storage.ts"
import { shownStorage } from "../../programs/StorageDir.ts"
import * as PrivateDir from "../file/PrivateDir.ts"
import * as StorageStore from "../store/StorageStore.ts"
import * as Api from "./Api.ts"
import * as Guard from "./Guard.ts"
import * as Limits from "./Limits.ts"
import * as Pages from "./Pages.ts"
import * as Token from "./Token.ts"

/** What the server was asked. */
export interface Options {
  /** The storage: a directory, or a `postgres://` url (docs/postgres.md). */
  readonly storage: string
  /** `--config FILE` as given (absolute): the runs the server starts read it too. */
  readonly config?: string | undefined
  readonly host: string
  readonly port: number
  /** The connection cap and the request timeouts (`Limits.defaults` when not given). */
  readonly limits?: Limits.Limits | undefined
  /** The line of a refused answer or run in the API's replies (the CLI's renderer; the error's message when not given). */
  readonly line?: ((error: unknown) => string) | undefined
}

/** The token's file could not be read or written (the file system's own words in `reason`). */
export class TokenUnavailable extends Schema.TaggedError<TokenUnavailable>()("TokenUnavailable", {
  dir: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}

/** The token of `storage` (a directory, or a database url: its directory in this user's config directory). */
export const forStorage = (storage: string): Effect.Effect<string, NotPrivate | TokenUnavailable> => {
  const dir = StorageStore.stateDirOf(storage)
  return Effect.try({
    try: () => {
      // A database's directory is parley's own, made here; a storage directory's is the person's.
      if (Storage.of(storage)._tag === "Database") PrivateDir.ensure(dir)
      return Token.loadOrCreate(dir)
    },
    catch: (e) =>
      e instanceof NotPrivate ? e : new TokenUnavailable({ dir, reason: String(e instanceof Error ? e.message : e) })
  })
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"])

/** The routes and the guard, for a server that listens on `host:port` (tests build it on a port of their own). */
export const app = (options: Options & { readonly token: string }) =>
  Layer.mergeAll(
    Api.layer(options.storage, options.config, options.line),
    Pages.layer(options.storage),
    Guard.layer({ token: options.token, hosts: Guard.hostsFor(options.host, options.port) })
  ).pipe(
    // One store for the page and the API (for a database: one pool).
    Layer.provide(StorageStore.storeLayer(options.storage))
  )

/** Serves until interrupted. */
export const run = (options: Options) =>
  Effect.scoped(
    Effect.gen(function* () {
      // Kept with the storage; a database's in this user's config directory for it (StorageStore.stateDirOf).
      const token = yield* forStorage(options.storage)
      // Loaded here: @effect/platform-node is an optional peer of the library.
      const NodeHttpServer = yield* Effect.promise(() => import("@effect/platform-node/NodeHttpServer"))
      const server = NodeHttpServer.layer(Limits.httpServer(options.limits ?? Limits.defaults), {
        host: options.host,
        port: options.port
      })
      const listening = yield* Layer.build(server)
      const address = (yield* HttpServer.HttpServer.pipe(Effect.provideContext(listening))).address
      const port = address._tag === "UnixPathAddress" ? options.port : address.port
      const serving = HttpRouter.serve(app({ ...options, port, token }), {
        disableLogger: true,
        disableListenLog: true
      })
      yield* Layer.build(Layer.provide(serving, Layer.succeedContext(listening)))
      const shown = options.host.includes(":") ? `[${options.host}]` : options.host
      yield* Console.log(`http://${shown}:${port}/?token=${token}`)
      if (!LOOPBACK.has(options.host)) {
        yield* Console.error(
          `parley: serving on ${options.host}, not only this machine: anyone who can reach port ${port} and has the token can read every conversation in ${shownStorage(options.storage)} and answer its questions. The connection is not encrypted.`
        )
      }
      return yield* Effect.never
    })
  )
