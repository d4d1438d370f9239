/**
 * Child process for the server-lifetime tests (docs/postgres.md): starts a
 * throwaway PostgreSQL server, writes where it is (`server.json` in the
 * directory it is given), and waits to be killed without ever stopping it.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { startPg } from "./Pg.ts"

const out = process.argv[2]!
const server = await startPg()
fs.writeFileSync(
  path.join(out, "server.json.tmp"),
  JSON.stringify({ dir: server.dir, port: server.port, watchdog: server.watchdog })
)
fs.renameSync(path.join(out, "server.json.tmp"), path.join(out, "server.json"))
setInterval(() => {}, 60_000)
