/**
 * Child process for the lock race test: waits until a shared start instant,
 * tries to take the lock once, prints the result, and keeps holding it until
 * the parent closes its stdin (once every racer has answered), so the racers
 * overlap however slowly the machine starts them.
 */
import * as FileLock from "../../src/layers/store/FileLock.ts"

const [file, startAt] = [process.argv[2]!, Number(process.argv[3])]
const wait = startAt - Date.now()
if (wait > 0) await new Promise((r) => setTimeout(r, wait))
const result = await FileLock.acquire(file)
process.stdout.write(result._tag + "\n")
process.stdin.resume()
await new Promise((r) => process.stdin.on("end", r))
