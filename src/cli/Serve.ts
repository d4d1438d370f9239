/**
 * `parley serve [--host 127.0.0.1] [--port 3141]` (docs/serve.md; `[server.web]` in config gives both too): a web page and
 * an HTTP API where the runs of this storage directory are watched and their
 * questions answered. The server code is loaded only here (`layers/serve/Server.ts`):
 * every other command starts without it.
 *
 * @example
 * ```sh
 * parley serve --port 3141
 * curl -H "Authorization: Bearer $(cat .parley/serve-token)" http://127.0.0.1:3141/api/questions
 * PARLEY_TOKEN=… parley serve --storage postgres://db/parley --cluster --port 3141   # one runner of a cluster (docs/cluster.md)
 * ```
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { CliFailure } from "./CliFailure.ts"
import { storage as storageOf } from "./Root.ts"
import * as Limits from "../layers/ServeLimits.ts"

/** The server's limits from its flags: each a whole number of at least 1 (a 0 would turn a bound off). */
const limitsOf = (maxConnections: number, headerTimeout: number, bodyTimeout: number) => {
  const bad = [
    ["--max-connections", maxConnections],
    ["--header-timeout", headerTimeout],
    ["--body-timeout", bodyTimeout]
  ].find(([, v]) => (v as number) < 1)
  return bad === undefined
    ? Effect.succeed<Limits.Limits>({
        maxConnections,
        headersTimeoutMs: headerTimeout * 1000,
        bodyTimeoutMs: bodyTimeout * 1000
      })
    : Effect.fail(new CliFailure({ code: 2, message: `${bad[0]} takes a whole number of at least 1, not ${bad[1]}.` }))
}

/**
 * Where to listen: `--host`/`--port` when given, else `[server.web]` `bind`/`port`
 * of the config (draft D16), else 127.0.0.1:3141. A bad config fails here, before
 * anything listens, with the file and the key (`server.web.port: …`).
 */
const listenOn = (host: Option.Option<string>, port: Option.Option<number>, configFile: string) =>
  Effect.gen(function* () {
    // Loaded here, as the server is: the TOML parser stays out of the other commands.
    const ConfigFile = yield* Effect.promise(() => import("../layers/ConfigFile.ts"))
    const web = (yield* ConfigFile.load(configFile).pipe(
      Effect.mapError((e) => new CliFailure({ code: 1, message: e.message }))
    )).server?.web
    return {
      host: Option.getOrElse(host, () => web?.bind ?? DEFAULT_HOST),
      port: Option.getOrElse(port, () => web?.port ?? DEFAULT_PORT)
    }
  })

const DEFAULT_HOST = "127.0.0.1"
const DEFAULT_PORT = 3141

export const serve = Command.make(
  "serve",
  {
    host: Flag.String("host").pipe(
      Flag.withDescription(
        "Address to listen on (default: [server.web] bind in config, else 127.0.0.1: this machine only)"
      ),
      Flag.optional
    ),
    port: Flag.Int("port").pipe(
      Flag.withDescription("Port to listen on (0: any free port; default: [server.web] port in config, else 3141)"),
      Flag.optional
    ),
    cluster: Flag.Boolean("cluster").pipe(
      Flag.withDescription("Run as one runner of a cluster over the PostgreSQL storage (needs $PARLEY_TOKEN)"),
      Flag.withDefault(false)
    ),
    maxConnections: Flag.Int("max-connections").pipe(
      Flag.withDescription("Connections open at once; at the cap idle ones are closed first (default 512)"),
      Flag.withDefault(Limits.defaults.maxConnections)
    ),
    headerTimeout: Flag.Int("header-timeout").pipe(
      Flag.withDescription("Seconds a request's headers may take to arrive, else 408 (default 10)"),
      Flag.withDefault(Limits.defaults.headersTimeoutMs / 1000)
    ),
    bodyTimeout: Flag.Int("body-timeout").pipe(
      Flag.withDescription("Seconds a whole request, body included, may take to arrive, else 408 (default 30)"),
      Flag.withDefault(Limits.defaults.bodyTimeoutMs / 1000)
    ),
    runnerHost: Flag.String("runner-host").pipe(
      Flag.withDescription(
        "With --cluster: the address the runner protocol listens on and other runners reach this one at (127.0.0.1: this machine only; give this machine's address when the cluster spans machines)"
      ),
      Flag.withDefault("127.0.0.1")
    ),
    runnerPort: Flag.Int("runner-port").pipe(
      Flag.withDescription(
        "With --cluster: the port other runners reach this one on (default: --port + 10000 when free, else any free port)"
      ),
      Flag.optional
    )
  },
  ({ host: flagHost, port: flagPort, cluster, runnerHost, runnerPort, maxConnections, headerTimeout, bodyTimeout }) =>
    Effect.gen(function* () {
      const limits = yield* limitsOf(maxConnections, headerTimeout, bodyTimeout)
      const at = yield* storageOf
      const { dir, config: configFile, configGiven } = at
      const { host, port } = yield* listenOn(flagHost, flagPort, configFile)
      if (cluster) {
        const Cluster = yield* Effect.promise(() => import("./serve/Cluster.ts"))
        return yield* Cluster.run({
          storage: dir,
          config: configGiven,
          host,
          port,
          runnerHost,
          runnerPort: Option.getOrUndefined(runnerPort),
          limits
        })
      }
      const [Server, ErrorLine, NotifyHooks] = yield* Effect.promise(() =>
        Promise.all([import("../layers/serve/Server.ts"), import("./ErrorLine.ts"), import("./NotifyHooks.ts")])
      )
      const line = (e: unknown) => ErrorLine.line(e, {})
      // While it serves, it delivers what the storage's runs left in the notification spool (a cluster's runners do).
      return yield* Effect.scoped(
        Effect.andThen(
          NotifyHooks.deliverLeftovers(at),
          Server.run({ storage: dir, config: configGiven, host, port, limits, line })
        )
      ).pipe(Effect.mapError((e) => ErrorLine.failure(e, {})))
    })
).pipe(Command.withDescription("Serve a web page and an HTTP API to watch runs and answer their questions"))
