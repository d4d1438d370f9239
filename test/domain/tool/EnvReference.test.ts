// Secrets out of config (docs/mcp.md#secrets-out-of-config): `${env:NAME}` in MCP env and headers values.
import { describe, expect, it } from "@effect/vitest"
import * as Result from "effect/Result"
import * as ConfigData from "../../../src/domain/tool/Config.ts"
import * as EnvReference from "../../../src/domain/tool/EnvReference.ts"

const vars: Record<string, string> = { TOKEN: "t0k", EMPTY: "", _X1: "x" }
const lookup = (name: string) => vars[name]

describe("EnvReference", () => {
  it("replaces every reference, anywhere in the value; other $ text is plain", () => {
    expect(EnvReference.expand("Bearer ${env:TOKEN}", lookup)).toStrictEqual(Result.succeed("Bearer t0k"))
    expect(EnvReference.expand("${env:_X1}-${env:TOKEN}-${env:EMPTY}.", lookup)).toStrictEqual(
      Result.succeed("x-t0k-.")
    )
    expect(EnvReference.expand("$HOME ${TOKEN} $${env:TOKEN}", lookup)).toStrictEqual(
      Result.succeed("$HOME ${TOKEN} $t0k")
    )
    expect(EnvReference.names("${env:A}${env:B}")).toStrictEqual(["A", "B"])
  })

  it("fails with the first variable that is not set (an empty one is set)", () => {
    expect(EnvReference.expand("${env:TOKEN}${env:NOPE}${env:ALSO_NOPE}", lookup)).toStrictEqual(Result.fail("NOPE"))
    expect(EnvReference.expandAll({ a: "${env:TOKEN}", b: "${env:NOPE}" }, lookup)).toStrictEqual(
      Result.fail({ key: "b", name: "NOPE" })
    )
  })

  it("a malformed reference is a problem, shown as written", () => {
    expect(EnvReference.problem("Bearer ${env:TOKEN}")).toBeUndefined()
    expect(EnvReference.problem("${env:1X}")).toBe(
      '${env:…} must name a variable: letters, digits and _ (not starting with a digit), got "${env:1X}"'
    )
    expect(EnvReference.problem("${env:TOKEN} ${env:A-B}")).toBe(
      '${env:…} must name a variable: letters, digits and _ (not starting with a digit), got "${env:A-B}"'
    )
    expect(EnvReference.problem("x ${env:OPEN")).toBe(
      '${env:…} must name a variable: letters, digits and _ (not starting with a digit), got "${env:OPEN"'
    )
  })

  it("config.toml: a malformed reference in env or headers is a config issue at its key", () => {
    const decoded = ConfigData.decode({
      mcp: {
        servers: {
          a: { command: "x", env: { K: "${env:}" } },
          b: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer ${env:GH TOKEN}" } }
        }
      }
    })
    expect(
      Result.isFailure(decoded) ? decoded.failure.map((i) => [ConfigData.formatPath(i.path), i.message]) : []
    ).toStrictEqual([
      [
        "mcp.servers.a.env.K",
        '${env:…} must name a variable: letters, digits and _ (not starting with a digit), got "${env:}"'
      ],
      [
        "mcp.servers.b.headers.Authorization",
        '${env:…} must name a variable: letters, digits and _ (not starting with a digit), got "${env:GH TOKEN}"'
      ]
    ])
  })
})
