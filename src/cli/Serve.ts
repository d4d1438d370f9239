/**
 * `parley serve [--host 127.0.0.1] [--port 3141]` (issue 23): a web page and
 * an HTTP API where the runs of this storage directory are watched and their
 * questions answered. The server code is loaded only here (`serve/Server.ts`):
 * every other command starts without it.
 *
 * @example
 * ```sh
 * parley serve --port 3141
 * curl -H "Authorization: Bearer $(cat .parley/serve-token)" http://127.0.0.1:3141/api/questions
 * PARLEY_TOKEN=… parley serve --storage postgres://db/parley --cluster --port 3141   # one runner of a cluster (issue 25)
 * ```
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { storage as storageOf } from "./Root.ts"

export const serve = Command.make(
  "serve",
  {
    host: Flag.String("host").pipe(
      Flag.withDescription("Address to listen on (127.0.0.1: this machine only)"),
      Flag.withDefault("127.0.0.1")
    ),
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on (0: any free port)"), Flag.withDefault(3141)),
    cluster: Flag.Boolean("cluster").pipe(
      Flag.withDescription(
        "Run as one runner of a cluster over the PostgreSQL storage (issue 25; needs $PARLEY_TOKEN)"
      ),
      Flag.withDefault(false)
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
  ({ host, port, cluster, runnerHost, runnerPort }) =>
    Effect.gen(function* () {
      const { dir, configGiven } = yield* storageOf
      if (cluster) {
        const Cluster = yield* Effect.promise(() => import("./serve/cluster/ClusterServer.ts"))
        return yield* Cluster.run({
          storage: dir,
          config: configGiven,
          host,
          port,
          runnerHost,
          runnerPort: Option.getOrUndefined(runnerPort)
        })
      }
      const Server = yield* Effect.promise(() => import("./serve/Server.ts"))
      return yield* Server.run({ storage: dir, config: configGiven, host, port })
    })
).pipe(Command.withDescription("Serve a web page and an HTTP API to watch runs and answer their questions"))
