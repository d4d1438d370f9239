import * as fs from "node:fs"
import * as EventsFile from "../src/domain/storage/EventsFile.ts"
import * as Summary from "../src/layers/store/Summary.ts"
const dir = fs.readdirSync("/tmp/deep/.parley/conversations").find((n) => /^1/.test(n))!
const text = fs.readFileSync(`/tmp/deep/.parley/conversations/${dir}/events.json`, "utf8")
try { console.log(Object.keys(Summary)) ; const r = (EventsFile as any).parse(text); console.log("parsed", r._tag ?? typeof r) } catch (e) { console.log((e as Error).stack?.split("\n").slice(0, 12).join("\n")) }
