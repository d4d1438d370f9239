/**
 * Secrets stay secret even when a tool echoes them (docs/security.md#secrets), from
 * outside: the built binary, a hostile local tool that prints the secret it
 * was given (plain, JSON, base64), a fake Anthropic server recording every
 * request body.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { binary } from "../support/Cli.ts"
import * as FakeLlmServer from "../support/FakeLlmServer.ts"
import { repoRoot } from "../support/Fixtures.ts"
import { addLeakTool, conversationDir, makeProject, persisted } from "../support/Project.ts"

const SECRET = "s3cr3t-Value-42!"

/**
 * The forms of a secret this test looks for, written by Node's encoders (not
 * the scrubber's table): plain, JSON (both escapings), URL (both cases, `+`),
 * hex (both cases), and the characters of base64 and base64url that hold the
 * secret's bits alone, at each alignment.
 */
const formsOf = (secret: string): Array<string> => {
  const bytes = Buffer.from(secret)
  const percent = [...bytes].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("")
  const forms = [
    secret,
    JSON.stringify(secret).slice(1, -1),
    JSON.stringify(secret)
      .slice(1, -1)
      .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`),
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    new URLSearchParams({ t: secret }).toString().slice(2),
    // RFC 3986 strict (Python's quote, curl): all but the unreserved characters, either case.
    [...bytes]
      .map((b) =>
        /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b))
          ? String.fromCharCode(b)
          : `%${b.toString(16).toUpperCase().padStart(2, "0")}`
      )
      .join(""),
    [...bytes]
      .map((b) =>
        /[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, "0")}`
      )
      .join(""),
    percent,
    percent.toUpperCase(),
    bytes.toString("hex"),
    bytes.toString("hex").toUpperCase()
  ]
  for (const align of [0, 1, 2]) {
    const from = Math.ceil((align * 8) / 6)
    const to = Math.floor(((align + bytes.length) * 8) / 6)
    for (const encoding of ["base64", "base64url"] as const)
      forms.push(
        Buffer.concat([Buffer.alloc(align), bytes])
          .toString(encoding)
          .slice(from, to)
      )
  }
  return forms
}

/** Text with line breaks, their JSON escapes and continuation labels taken out, so a split form reads whole. */
const unbroken = (text: string) => text.replace(/[ \t]*(?:\r?\n|\\r\\n|\\n)[ \t]*(?:part2 )?/g, "")

/** The forms of `secret` found in `text`, read whole and unbroken, also inside the storage base64 of a field. */
const leaks = (text: string, secret: string): Array<string> => {
  const decoded = [...text.matchAll(/"([A-Za-z0-9+/]{8,}={0,2})"/g)].map((m) =>
    Buffer.from(m[1]!, "base64").toString("utf8")
  )
  const forms = formsOf(secret)
  // Hex printed in groups (`xxd`, `hexdump`) reads whole without its blanks.
  const hex = new Set([Buffer.from(secret).toString("hex"), Buffer.from(secret).toString("hex").toUpperCase()])
  const views = [text, unbroken(text), ...decoded, ...decoded.map(unbroken)]
  return [
    ...views.flatMap((t) => forms.filter((f) => t.includes(f))),
    ...views.map((t) => t.replace(/[ \t\r\n]/g, "")).flatMap((t) => [...hex].filter((f) => t.includes(f)))
  ]
}

/** Every file under `dir`, as bytes. */
const filesUnder = (dir: string): Array<[string, Buffer]> =>
  fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath, e.name)
      return [file, fs.readFileSync(file)] as [string, Buffer]
    })

describe("an echoed secret", () => {
  it.live("appears in no file under the storage directory and in no request body sent to the provider", () =>
    Effect.gen(function* () {
      const fake = yield* FakeLlmServer.make
      const p = makeProject()
      addLeakTool(p, SECRET)
      fake.enqueueAnthropic(
        { blocks: [{ type: "tool_use", id: "toolu_1", name: "leak", input: {} }], stopReason: "tool_use" },
        { blocks: [{ type: "text", text: "Done." }] }
      )
      const code = yield* Effect.callback<number | null>((resume) => {
        const child = spawn(
          process.execPath,
          [binary, "--storage", p.storage, "query", "--model", "anthropic/claude-test", "leak it"],
          {
            cwd: p.root,
            env: { ...process.env, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url, PARLEY_STORAGE: "" },
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        child.on("close", (c) => resume(Effect.succeed(c)))
      })
      expect(code).toBe(0)
      // The tool did echo it; what was recorded is the scrubbed text.
      const result = persisted(p).find((e) => e.type === "tool_call_response")!
      const content = Buffer.from(String(result["content"]), "base64").toString("utf8")
      expect(content).toMatch(/^token=\[redacted\] json=\{"t": "\[redacted\]"\} b64=\[redacted\]/)
      expect(persisted(p).find((e) => e.type === "inquiry_response")!["outcome"]).toBe("redacted")
      const forms = formsOf(SECRET)
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
    })
  )
})

/** A secret with a space, URL and JSON specials and a character beyond ASCII, so each encoding differs from plain. */
const ODD_SECRET = "s3cr3t Value/42!&é"

/** What the tool printed, per encoding, as parley records and sends it (checked exactly: no edge of an encoding left). */
const SCRUBBED: ReadonlyArray<[string, string]> = [
  ["plain", "token=[redacted]"],
  ["json", '{"token": "[redacted]"}'],
  ["split", "token: [redacted]"],
  ["split-crlf", "token=[redacted]"],
  ["hex", "sha debug: [redacted]"],
  ["hex-upper", "sha debug: [redacted]"],
  ["xxd", "[redacted]"],
  ["url", "GET /api?token=[redacted]"],
  ["url-lower", "GET /api?token=[redacted]"],
  ["url-plus", "POST body: token=[redacted]"],
  // "xy" + secret + "z" and "x" + secret: the characters left hold only the neighbours' bits.
  ["base64-edges", "b64=eH[redacted]eg== b64url=e[redacted]"],
  [
    "base64-wrapped",
    "QXV0aG9yaXphdGlvbiBoZWFkZXIgZm9sbG93cywgYmFzZTY0IHdyYXBwZWQ6I[redacted]gYW5kIHNvbWUgbW9yZSBieXRlcw==\n"
  ]
]

describe("a secret echoed in another encoding (docs/security.md#secrets)", () => {
  for (const [encoding, expected] of SCRUBBED) {
    it.live(`${encoding}: in no file under the storage, no request body, not in conversation print`, () =>
      Effect.gen(function* () {
        const fake = yield* FakeLlmServer.make
        const p = makeProject()
        const log = path.join(p.root, "printed.txt")
        fs.copyFileSync(
          path.join(repoRoot, "test", "fixtures", "tools", "leak_encoded.py"),
          path.join(p.root, "leak_encoded.py")
        )
        fs.appendFileSync(
          path.join(p.storage, "config.toml"),
          `
[conversation.tools.leak]
source = "local"
command = "python3 leak_encoded.py"
description = "Echoes its token in one encoding."
parameters = { type = "object", properties = { encoding = { type = "string" } } }
run = "unattended"

[conversation.tools.leak.questions.token]
answer = "${ODD_SECRET}"
`
        )
        fake.enqueueAnthropic(
          { blocks: [{ type: "tool_use", id: "toolu_1", name: "leak", input: { encoding } }], stopReason: "tool_use" },
          { blocks: [{ type: "text", text: "Done." }] }
        )
        const env = {
          ...process.env,
          ANTHROPIC_API_KEY: "k",
          ANTHROPIC_BASE_URL: fake.url,
          PARLEY_STORAGE: "",
          LEAK_LOG: log
        }
        const run = (args: ReadonlyArray<string>) =>
          Effect.callback<{ code: number | null; stdout: string }>((resume) => {
            const child = spawn(process.execPath, [binary, "--storage", p.storage, ...args], {
              cwd: p.root,
              env,
              stdio: ["ignore", "pipe", "pipe"]
            })
            let stdout = ""
            child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
            child.on("close", (code) => resume(Effect.succeed({ code, stdout })))
          })
        expect((yield* run(["query", "--model", "anthropic/claude-test", "leak it"])).code).toBe(0)
        // The tool did print the secret in that encoding (the detector sees it there)…
        expect(leaks(fs.readFileSync(log, "utf8"), ODD_SECRET).length).toBeGreaterThan(0)
        // …and what parley recorded is the scrubbed text, exactly.
        const result = persisted(p).find((e) => e.type === "tool_call_response")!
        expect(Buffer.from(String(result["content"]), "base64").toString("utf8")).toBe(expected)
        const written = filesUnder(p.storage).filter(([file]) => path.basename(file) !== "config.toml")
        expect(written.some(([file]) => file.endsWith("events.json"))).toBe(true)
        for (const [file, bytes] of written) expect(leaks(bytes.toString("utf8"), ODD_SECRET), file).toStrictEqual([])
        expect(fake.requests.length).toBe(2)
        for (const request of fake.requests) expect(leaks(JSON.stringify(request.body), ODD_SECRET)).toStrictEqual([])
        const id = path.basename(conversationDir(p)).split("-")[0]!
        for (const format of ["markdown", "json", "html"]) {
          const printed = yield* run(["conversation", "print", id, "--format", format])
          expect(printed.code).toBe(0)
          expect(printed.stdout).toContain("[redacted]")
          expect(leaks(printed.stdout, ODD_SECRET), format).toStrictEqual([])
        }
      })
    )
  }
})
