/**
 * `parley serve` once its flags are read (docs/serve.md): the API (`Api.ts`), the
 * page (`Pages.ts`) and the guard in front of both (`Guard.ts`), on Effect's
 * HTTP server over Node's. The first line on stdout is the address with the
 * token; a host other than loopback is warned about on stderr. The server
 * lives until the process is interrupted (Ctrl-C, SIGTERM): then it stops
 * listening and closes its connections.
 *
 * Loaded only by `parley serve` (`cli/Serve.ts` imports it lazily): the
 * other commands start without the HTTP code.
 *
 * @example
 * ```ts
 * import * as Server from "./Server.ts"
 * Server.run({ storage: "/home/me/.parley", host: "127.0.0.1", port: 3141 })
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Storage from "../../domain/storage/Storage.ts"
import * as Hint from "../Hint.ts"
import * as PrivateDir from "../../layers/file/PrivateDir.ts"
import type { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import * as StorageStore from "../../layers/store/StorageStore.ts"
import * as Api from "../../layers/serve/Api.ts"
import * as Guard from "../../layers/serve/Guard.ts"
import * as Limits from "../../layers/serve/Limits.ts"
import * as Pages from "../../layers/serve/Pages.ts"
import * as Token from "../../layers/serve/Token.ts"

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
}

/** The token of `storage` (a directory, or a database url: its directory in this user's config directory). */
export const forStorage = (storage: string): Effect.Effect<string, CliFailure> =>
  Effect.try({
    try: () => {
      const dir = StorageStore.stateDirOf(storage)
      // A database's directory is parley's own, made here; a storage directory's is the person's.
      if (Storage.of(storage)._tag === "Database") PrivateDir.ensure(dir)
      return Token.loadOrCreate(dir)
    },
    catch: (e) => ErrorLine.failure(e, {})
  })

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"])

/** The routes and the guard, for a server that listens on `host:port` (tests build it on a port of their own). */
export const app = (options: Options & { readonly token: string }) =>
  Layer.mergeAll(
    Api.layer(options.storage, options.config, (e) => ErrorLine.line(e, {})),
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
          `parley: serving on ${options.host}, not only this machine: anyone who can reach port ${port} and has the token can read every conversation in ${Hint.shownStorage(options.storage)} and answer its questions. The connection is not encrypted.`
        )
      }
      return yield* Effect.never
    })
  )
