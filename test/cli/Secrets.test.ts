/**
 * Secrets stay secret even when a tool echoes them (issue 11 item 5), from
 * outside: the built binary, a hostile local tool that prints the secret it
 * was given (plain, JSON, base64), a fake Anthropic server recording every
 * request body.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redact from "../../src/domain/tool/Redact.ts"
import { binary } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { makeProject, persisted } from "../support/Project.ts"

const SECRET = "s3cr3t-Value-42!"

/** Every file under `dir`, as bytes. */
const filesUnder = (dir: string): Array<[string, Buffer]> =>
  fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name)
      return [file, fs.readFileSync(file)] as [string, Buffer]
    })

describe("an echoed secret", () => {
  it.live("appears in no file under the storage directory and in no request body sent to the provider", () =>
    Effect.gen(function*() {
      const fake = yield* FakeLlmServer.make
      const p = makeProject()
      fs.copyFileSync(path.join(repoRoot, "test", "fixtures", "tools", "leak.py"), path.join(p.root, "leak.py"))
      fs.appendFileSync(path.join(p.storage, "config.toml"), `
[conversation.tools.leak]
source = "local"
command = "python3 leak.py"
description = "Echoes its token."
parameters = { type = "object", properties = {} }
run = "unattended"

[conversation.tools.leak.questions.token]
answer = "${SECRET}"
`)
      fake.enqueueAnthropic(
        { blocks: [{ type: "tool_use", id: "toolu_1", name: "leak", input: {} }], stopReason: "tool_use" },
        { blocks: [{ type: "text", text: "Done." }] }
      )
      const code = yield* Effect.callback<number | null>((resume) => {
        const child = spawn(process.execPath, [binary, "--storage", p.storage, "query", "--model", "anthropic/claude-test", "leak it"], {
          cwd: p.root,
          env: { ...process.env, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, PARLEY_STORAGE: "" },
          stdio: ["ignore", "pipe", "pipe"]
        })
        child.on("close", (c) => resume(Effect.succeed(c)))
      })
      expect(code).toBe(0)
      // The tool did echo it; what was recorded is the scrubbed text.
      const result = persisted(p).find((e) => e.type === "tool_call_response")!
      const content = Buffer.from(String(result["content"]), "base64").toString("utf8")
      expect(content).toMatch(/^token=\[redacted\] json=\{"t": "\[redacted\]"\} b64=\[redacted\]/)
      expect(persisted(p).find((e) => e.type === "inquiry_response")!["outcome"]).toBe("redacted")
      const forms = Redact.formsOf(SECRET)
      expect(forms.length).toBeGreaterThanOrEqual(4) // plain and a base64 core per alignment
      // Everything parley wrote (config.toml is where the person put the answer).
      const written = filesUnder(p.storage).filter(([file]) => path.basename(file) !== "config.toml")
      expect(written.some(([file]) => file.endsWith("events.json"))).toBe(true)
      for (const [file, bytes] of written) {
        const text = bytes.toString("utf8")
        for (const form of forms) expect(text.includes(form), `${form} in ${file}`).toBe(false)
        // The storage base64 of every field, decoded, holds no secret either.
        for (const m of text.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g)) {
          expect(Buffer.from(m[1]!, "base64").toString("utf8").includes(SECRET), file).toBe(false)
        }
      }
      expect(fake.requests.length).toBe(2)
      for (const request of fake.requests) {
        const body = JSON.stringify(request.body)
        for (const form of forms) expect(body.includes(form)).toBe(false)
      }
      expect(JSON.stringify(fake.requests[1]!.body)).toContain("[redacted]")
    }))
})
