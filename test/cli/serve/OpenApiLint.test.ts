// parley serve (docs/serve.md#openapi): the document at /api/openapi.json passes redocly's `recommended`
// ruleset. redocly is not a dependency (nor installed offline here), so the rules of that set that this
// document can break are checked below, on the document the built server serves and on the cluster's
// (the same routes plus /api/cluster). When $PARLEY_REDOCLY names a redocly binary, it lints the served
// document as well and must exit 0.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as OpenApi from "effect/http-api/OpenApi"
import { ClusterApi } from "../../../src/services/ClusterApi.ts"
import { makeProject } from "../../support/Project.ts"
import * as Serve from "../../support/Serve.ts"

const children: Array<{ kill: (s: NodeJS.Signals) => boolean }> = []
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL")
})

type Json = any

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/** Every `$ref` in `node`, with where it was found. */
const refs = (node: Json, at: string, out: Array<[string, string]> = []): Array<[string, string]> => {
  if (Array.isArray(node)) node.forEach((n, i) => refs(n, `${at}/${i}`, out))
  else if (typeof node === "object" && node !== null)
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push([at, v])
      else refs(v, `${at}/${k}`, out)
    }
  return out
}

/** What the JSON pointer `ref` (`#/components/…`) names in `doc`, or undefined. */
const resolve = (doc: Json, ref: string): Json =>
  ref
    .slice(2)
    .split("/")
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))
    .reduce((node: Json, key) => (node === undefined || node === null ? undefined : node[key]), doc)

/** The problems redocly's `recommended` set would report as errors or warnings (the rules this document can break). */
const problems = (doc: Json): Array<string> => {
  const out: Array<string> = []
  if (!/^3\.[01]\.\d+$/.test(doc.openapi)) out.push(`openapi: ${doc.openapi} is not 3.0 or 3.1`)
  if (!doc.info?.title) out.push("info: no title")
  if (!doc.info?.version) out.push("info: no version")
  if (!doc.info?.license?.name) out.push("info-license: no license")
  if (doc.info?.license !== undefined && !doc.info.license.url && !doc.info.license.identifier)
    out.push("info-license-strict: the license has no url")
  if (!Array.isArray(doc.servers) || doc.servers.length === 0) out.push("no-empty-servers: no servers")
  const schemes = doc.components?.securitySchemes ?? {}
  for (const name of ["bearer", "cookie"]) if (schemes[name] === undefined) out.push(`security scheme ${name} missing`)
  const declaredTags = new Set<string>()
  for (const tag of doc.tags ?? []) {
    declaredTags.add(tag.name)
    if (!tag.description) out.push(`tag-description: tag ${tag.name} has none`)
  }
  const ids = new Map<string, string>()
  for (const [route, item] of Object.entries<Json>(doc.paths ?? {})) {
    const params = [...route.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!)
    for (const method of METHODS) {
      const op = item[method]
      if (op === undefined) continue
      const where = `${method.toUpperCase()} ${route}`
      if (!op.operationId) out.push(`operation-operationId: ${where} has none`)
      else if (ids.has(op.operationId))
        out.push(`operation-operationId-unique: ${op.operationId} of ${where} and ${ids.get(op.operationId)}`)
      else ids.set(op.operationId, where)
      if (!op.summary) out.push(`operation-summary: ${where} has none`)
      for (const tag of op.tags ?? []) if (!declaredTags.has(tag)) out.push(`operation-tag-defined: ${where}: ${tag}`)
      const responses = Object.entries<Json>(op.responses ?? {})
      if (!responses.some(([status]) => /^2\d\d$/.test(status)))
        out.push(`operation-2xx-response: ${where} declares no 2xx`)
      if (!responses.some(([status]) => /^4\d\d$/.test(status)))
        out.push(`operation-4xx-response: ${where} declares no 4xx`)
      for (const [status, response] of responses)
        if (typeof response.description !== "string") out.push(`${where} ${status}: a response without description`)
      const inPath = (op.parameters ?? []).filter((p: Json) => p.in === "path").map((p: Json) => p.name)
      for (const p of params) if (!inPath.includes(p)) out.push(`path-parameters-defined: ${where}: {${p}}`)
      for (const p of inPath) if (!params.includes(p)) out.push(`path-parameters-defined: ${where}: ${p} not in path`)
      const security = op.security ?? doc.security ?? []
      if (security.length === 0) out.push(`security-defined: ${where} has no security`)
      for (const requirement of security)
        for (const name of Object.keys(requirement))
          if (schemes[name] === undefined) out.push(`security-defined: ${where} names ${name}, not declared`)
    }
  }
  for (const [at, ref] of refs(doc, "#"))
    if (!ref.startsWith("#/") || resolve(doc, ref) === undefined) out.push(`no-unresolved-refs: ${at}: ${ref}`)
  return out
}

describe("parley serve's OpenAPI document", () => {
  it("passes redocly's recommended rules; both the bearer and the page's cookie are declared and each lets a request in", async () => {
    const p = makeProject()
    const server = await Serve.start(p)
    children.push(server.child)
    const doc = await server.json("/api/openapi.json")
    expect(doc.status).toBe(200)
    expect(problems(doc.body)).toStrictEqual([])
    expect(doc.body.components.securitySchemes).toStrictEqual({
      bearer: { type: "http", scheme: "Bearer" },
      cookie: { type: "apiKey", name: "parley_token", in: "cookie" }
    })
    // Every operation takes either: the cookie (the page's) as well as the bearer (any other client's).
    for (const item of Object.values<Json>(doc.body.paths))
      for (const op of Object.values<Json>(item)) expect(op.security).toStrictEqual([{ bearer: [] }, { cookie: [] }])
    const byCookie = await fetch(`${server.base}/api/conversations`, {
      headers: { cookie: `parley_token=${server.token}` }
    })
    expect(byCookie.status).toBe(200)
    const redocly = process.env["PARLEY_REDOCLY"]
    if (redocly !== undefined && redocly !== "") {
      const file = path.join(p.root, "openapi.json")
      fs.writeFileSync(file, JSON.stringify(doc.body))
      // Offline: no telemetry, no update check (tests reach nothing beyond 127.0.0.1).
      const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
      const lint = spawnSync(redocly, ["lint", "--extends=recommended", file], {
        encoding: "utf8",
        timeout: 120_000,
        env
      })
      expect(lint.status, lint.stdout + lint.stderr).toBe(0)
    }
    expect(await server.stop()).toBe(143)
  }, 120_000)

  it("the cluster's document (the same routes and /api/cluster) passes them too", () => {
    const doc = OpenApi.fromApi(ClusterApi)
    expect(problems(doc)).toStrictEqual([])
    expect(Object.keys(doc.paths)).toContain("/api/cluster")
  })

  it("the check finds what redocly reported before (no summary, no servers, no license, an undeclared scheme, a dangling $ref)", () => {
    const doc = {
      openapi: "3.1.0",
      info: { title: "t", version: "1" },
      tags: [{ name: "x" }],
      paths: {
        "/a/{id}": {
          get: {
            operationId: "a",
            tags: ["x"],
            security: [{ nope: [] }],
            responses: { "200": { description: "ok", content: { "application/json": { schema: { $ref: "#/x" } } } } }
          }
        }
      }
    }
    expect(problems(doc)).toStrictEqual([
      "info-license: no license",
      "no-empty-servers: no servers",
      "security scheme bearer missing",
      "security scheme cookie missing",
      "tag-description: tag x has none",
      "operation-summary: GET /a/{id} has none",
      "operation-4xx-response: GET /a/{id} declares no 4xx",
      "path-parameters-defined: GET /a/{id}: {id}",
      "security-defined: GET /a/{id} names nope, not declared",
      "no-unresolved-refs: #/paths//a/{id}/get/responses/200/content/application/json/schema: #/x"
    ])
  })
})
