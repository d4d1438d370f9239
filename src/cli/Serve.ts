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
 * ```
 */
import * as Effect from "effect/Effect"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { storageDir } from "./Root.ts"

export const serve = Command.make(
  "serve",
  {
    host: Flag.String("host").pipe(Flag.withDescription("Address to listen on (127.0.0.1: this machine only)"), Flag.withDefault("127.0.0.1")),
    port: Flag.Int("port").pipe(Flag.withDescription("Port to listen on (0: any free port)"), Flag.withDefault(3141))
  },
  ({ host, port }) =>
    Effect.gen(function*() {
      const storage = yield* storageDir
      const Server = yield* Effect.promise(() => import("./serve/Server.ts"))
      return yield* Server.run({ storage, host, port })
    })
).pipe(Command.withDescription("Serve a web page and an HTTP API to watch runs and answer their questions"))
