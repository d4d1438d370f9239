// `[notify]` in config.toml (docs/questions-and-approvals.md#notifications): what it takes, and errors that
// name the key.
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as Config from "../../../src/domain/tool/Config.ts"

const problems = (notify: unknown) => {
  const r = Config.decode({ notify })
  return Result.isFailure(r) ? r.failure.map((i) => `${Config.formatPath(i.path)}: ${i.message}`) : []
}

describe("[notify]", () => {
  it("takes a command and a webhook with a secret named from the environment", () => {
    expect(
      problems({
        command: ["/bin/sh", "hook.sh"],
        webhook: {
          url: "https://hooks.example.com/p",
          secret: "${env:HOOK_SECRET}",
          events: ["question_opened", "run_waiting"],
          retry_for: "2m",
          timeout: 5
        }
      })
    ).toStrictEqual([])
  })

  it("names the key of each mistake", () => {
    expect(problems({ command: [] })[0]).toMatch(/^notify\.command: /)
    expect(problems({ webhook: { url: "ftp://x" } })).toStrictEqual([
      'notify.webhook.url: expected an http:// or https:// URL, got "ftp://x"'
    ])
    expect(problems({ webhook: { url: "http://127.0.0.1:1/h", secret: "${env:1X}" } })[0]).toMatch(
      /^notify\.webhook\.secret: \$\{env:…\} must name a variable/
    )
    expect(problems({ webhook: { url: "http://127.0.0.1:1/h", events: ["question_asked"] } })[0]).toMatch(
      /^notify\.webhook\.events\[0\]: /
    )
    expect(problems({ webhook: { url: "http://127.0.0.1:1/h", retry_for: "0s" } })[0]).toMatch(
      /^notify\.webhook\.retry_for: /
    )
  })

  it("refuses a webhook URL with credentials, and never quotes a password back", () => {
    const refused = problems({ webhook: { url: "https://bot:hunter2@hooks.example.com/p" } })
    expect(refused).toStrictEqual([
      "notify.webhook.url: must not hold credentials (user:password@): sign deliveries with secret (it may be ${env:NAME}) and check X-Parley-Signature"
    ])
    expect(problems({ webhook: { url: "https://token@hooks.example.com/p" } })[0]).toMatch(/must not hold credentials/)
    // Not a URL parley takes at all: the error quotes it, its credentials replaced.
    expect(problems({ webhook: { url: "https://bot:hunter2@hooks.example.com/a b" } })).toStrictEqual([
      'notify.webhook.url: expected an http:// or https:// URL, got "https://…@hooks.example.com/a b"'
    ])
    // An @ in the path or query is no credential.
    expect(problems({ webhook: { url: "https://hooks.example.com/p?to=me@example.com" } })).toStrictEqual([])
  })
})
