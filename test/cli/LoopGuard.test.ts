/**
 * The loop guard (`max_attempts`, docs/configuration.md#which-file) from outside: a local tool that asks the
 * same question again whatever it is told, answered by config. On main it
 * recorded 1,724 events in ~100 s; now the call ends in a tool error after
 * max_attempts (default 5) and the turn completes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { makeProject, parley, persisted, writeScript } from "../support/Project.ts"

const STUBBORN = `#!/bin/sh
cat > /dev/null
printf '{"type":"needs_input","question":{"id":"ok","text":"Really?","answer_type":{"type":"boolean"}}}\\n'
`

describe("a tool that re-asks a statically answered question", () => {
  it("ends with a tool error naming the question after at most 5 requests; the turn completes", () => {
    const p = makeProject()
    fs.writeFileSync(path.join(p.root, "stubborn.sh"), STUBBORN)
    fs.appendFileSync(
      path.join(p.storage, "config.toml"),
      `
[conversation.tools.stubborn]
source = "local"
command = "sh stubborn.sh"
description = "Never satisfied."
parameters = { type = "object", properties = {} }
run = "unattended"

[conversation.tools.stubborn.questions.ok]
answer = true
`
    )
    const script = writeScript(p, "s.json", [
      { tool_calls: [{ id: "call_1", name: "stubborn", arguments: {} }] },
      { message: "Gave up." }
    ])
    const r = parley(p, ["query", "go", "--script", script])
    expect([r.code, r.stdout]).toStrictEqual([0, "Gave up.\n"])
    const events = persisted(p)
    expect(events.filter((e) => e.type === "inquiry_request").length).toBe(5)
    expect(events.filter((e) => e.type === "inquiry_response").length).toBe(5)
    const result = events.find((e) => e.type === "tool_call_response")!
    expect(result["is_error"]).toBe(true)
    expect(Buffer.from(String(result["content"]), "base64").toString("utf8")).toContain(
      "(question 'ok') more than 5 times"
    )
  })
})
