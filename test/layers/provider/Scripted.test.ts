import { assert, describe, it } from "@effect/vitest"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { TestClock } from "effect/testing"
import { ChatRequest } from "../../../src/domain/event/ChatRequest.ts"
import { ChatResponse } from "../../../src/domain/event/ChatResponse.ts"
import * as ScriptedModel from "../../../src/domain/model/ScriptedModel.ts"
import { ToolCallRequest } from "../../../src/domain/event/ToolCallRequest.ts"
import * as Scripted from "../../../src/layers/provider/Scripted.ts"
import { collect } from "../../../src/domain/model/Reply.ts"
import { Provider, type ProviderRequest } from "../../../src/services/Provider.ts"
import { ts } from "./fixtures.ts"

const plain: ProviderRequest = {
  model: "scripted",
  systemParts: [],
  events: [new ChatRequest({ timestamp: ts(), content: "Hi" })],
  tools: []
}
const structured: ProviderRequest = { ...plain, schema: { type: "object" }, toolChoice: "none" }

const stepsOf = (script: unknown) => {
  const r = ScriptedModel.decode(script)
  if (Result.isFailure(r)) throw new Error(r.failure)
  return r.success
}

const getProvider = Effect.gen(function* () {
  return yield* Provider
})

const when = ts()
const now = () => when

describe("ScriptedModel (script file schema)", () => {
  it("resolves default tool-call ids as call_<n> across the whole script", () => {
    assert.deepStrictEqual(
      stepsOf({
        steps: [
          { tool_calls: [{ name: "a" }, { id: "mine", name: "b", arguments: { x: 1 } }] },
          { tool_calls: [{ name: "c" }] },
          { structured: null }
        ]
      }),
      [
        {
          toolCalls: [
            { id: "call_1", name: "a", arguments: {} },
            { id: "mine", name: "b", arguments: { x: 1 } }
          ],
          delayMs: 0
        },
        { toolCalls: [{ id: "call_3", name: "c", arguments: {} }], delayMs: 0 },
        { toolCalls: [], structured: { value: null }, delayMs: 0 }
      ]
    )
  })

  it("rejects typos, empty steps and contradictory steps with the step index", () => {
    const failure = (script: unknown) => {
      const r = ScriptedModel.decode(script)
      return Result.isFailure(r) ? r.failure : "ok"
    }
    assert.match(failure({ steps: [{ mesage: "hi" }] }), /mesage/)
    assert.strictEqual(
      failure({ steps: [{ message: "ok" }, {}] }),
      "steps[1]: a step needs one of `message`, `reasoning`, `tool_calls`, `structured` or `error`"
    )
    assert.strictEqual(
      failure({ steps: [{ error: "x", message: "y" }] }),
      "steps[0]: `error` cannot be combined with a reply or `structured`"
    )
    assert.strictEqual(
      failure({ steps: [{ structured: 1, tool_calls: [] }] }),
      "steps[0]: `structured` can only be combined with `reasoning` and `delay_ms`"
    )
    assert.match(failure({ steps: [{ message: "x", delay_ms: -1 }] }), /delay_ms/)
    assert.match(failure({ nope: [] }), /steps/)
    const notJson = ScriptedModel.parse("{")
    assert.match(Result.isFailure(notJson) ? notJson.failure : "", /^not JSON/)
  })
})

describe("Scripted provider", () => {
  it.effect("a reply step streams reasoning and text in chunks, then tool calls; collect builds the events", () =>
    Effect.gen(function* () {
      const provider = yield* Scripted.make(
        stepsOf({
          steps: [
            {
              reasoning: "Need to write it.",
              message: "Writing the note now.",
              tool_calls: [
                { name: "write_note", arguments: { path: "a.txt" } },
                { id: "x9", name: "read_note" }
              ]
            }
          ]
        })
      )
      const deltas = yield* Stream.runCollect(provider.stream(plain))
      assert.deepStrictEqual(
        deltas.map((d) => d._tag),
        [
          "ReasoningDelta",
          "ReasoningDelta",
          "ReasoningDelta",
          "ReasoningDelta",
          "ReasoningDone",
          "TextDelta",
          "TextDelta",
          "TextDelta",
          "TextDelta",
          "ToolCallStart",
          "ToolCall",
          "ToolCallStart",
          "ToolCall",
          "Finish"
        ]
      )
      const reply = yield* collect(Stream.fromIterable(deltas), { now })
      assert.deepStrictEqual(reply.events, [
        ChatResponse.reasoning(when, "Need to write it."),
        ChatResponse.message(when, "Writing the note now."),
        new ToolCallRequest({ timestamp: when, id: "call_1", name: "write_note", arguments: { path: "a.txt" } }),
        new ToolCallRequest({ timestamp: when, id: "x9", name: "read_note", arguments: {} })
      ])
      assert.strictEqual(reply.stopReason, "tool_use")
    })
  )

  it.effect("each request consumes the next step; running out is a provider error", () =>
    Effect.gen(function* () {
      const provider = yield* Scripted.make(stepsOf({ steps: [{ message: "one" }, { structured: { answer: true } }] }))
      assert.deepStrictEqual((yield* collect(provider.stream(plain), { now })).events, [
        ChatResponse.message(when, "one")
      ])
      assert.deepStrictEqual((yield* collect(provider.stream(structured), { now })).events, [
        ChatResponse.structured(when, { answer: true })
      ])
      const error = yield* Effect.flip(collect(provider.stream(plain)))
      assert.deepStrictEqual(
        { provider: error.provider, message: error.message, retryable: error.retryable, attempts: error.attempts },
        {
          provider: "scripted",
          message: "The script has no step left for request 3 (it has 2 steps). Add steps to the script.",
          retryable: false,
          attempts: 1
        }
      )
    })
  )

  it.effect("a structured request needs a structured step, and a structured step needs a structured request", () =>
    Effect.gen(function* () {
      const provider = yield* Scripted.make(
        stepsOf({ steps: [{ message: "plain" }, { structured: { answer: 1 } }, { message: "next" }] })
      )
      const e1 = yield* Effect.flip(collect(provider.stream(structured)))
      assert.match(e1.message, /^Script step 1 has no `structured` answer, but request 1 asks for structured output/)
      const e2 = yield* Effect.flip(collect(provider.stream(plain)))
      assert.match(e2.message, /^Script step 2 is a `structured` answer, but request 2 is a plain request/)
      // The failed requests still consumed their steps.
      assert.deepStrictEqual((yield* collect(provider.stream(plain), { now })).events, [
        ChatResponse.message(when, "next")
      ])
    })
  )

  it.effect("a schema on the trailing ChatRequest makes the request structured", () =>
    Effect.gen(function* () {
      const provider = yield* Scripted.make(stepsOf({ steps: [{ reasoning: "hmm", structured: "B" }] }))
      const request = {
        ...plain,
        events: [new ChatRequest({ timestamp: ts(), content: "Which?", schema: { type: "object" } })]
      }
      assert.deepStrictEqual((yield* collect(provider.stream(request), { now })).events, [
        ChatResponse.reasoning(when, "hmm"),
        ChatResponse.structured(when, "B")
      ])
    })
  )

  it.effect("an error step is a provider error with its text", () =>
    Effect.gen(function* () {
      const provider = yield* Scripted.make(stepsOf({ steps: [{ error: "provider unavailable" }, { message: "ok" }] }))
      const error = yield* Effect.flip(collect(provider.stream(plain)))
      assert.strictEqual(error.message, "provider unavailable")
      assert.strictEqual(error.provider, "scripted")
      assert.strictEqual(((yield* collect(provider.stream(plain))).events[0] as ChatResponse).message, "ok")
    })
  )

  it.effect("tool calls are refused when the request forbids them", () =>
    Effect.gen(function* () {
      const provider = yield* Scripted.make(stepsOf({ steps: [{ tool_calls: [{ name: "x" }] }] }))
      const error = yield* Effect.flip(collect(provider.stream({ ...plain, toolChoice: "none" })))
      assert.strictEqual(error.message, "Script step 1 calls tools, but request 1 does not allow tool calls.")
    })
  )

  it.effect("delay_ms waits (on the Clock) before replying, and the wait is interruptible", () =>
    Effect.gen(function* () {
      const provider = yield* Scripted.make(
        stepsOf({
          steps: [
            { delay_ms: 500, message: "slow reply" },
            { delay_ms: 500, message: "never" }
          ]
        })
      )
      const fiber = yield* Effect.forkChild(collect(provider.stream(plain), { now }))
      yield* TestClock.adjust("499 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual((yield* Fiber.join(fiber)).events, [ChatResponse.message(when, "slow reply")])

      const second = yield* Effect.forkChild(collect(provider.stream(plain)))
      yield* TestClock.adjust("100 millis")
      yield* Fiber.interrupt(second)
      assert.isTrue((yield* Fiber.await(second))._tag === "Failure")
    })
  )

  it.live("layerFromFile reads a script file; a missing or invalid file is a provider error naming it", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "parley-script-"))),
        (d) => Effect.promise(() => rm(d, { recursive: true, force: true }))
      )
      const good = join(dir, "script.json")
      const bad = join(dir, "bad.json")
      yield* Effect.promise(() => writeFile(good, JSON.stringify({ steps: [{ message: "from file" }] })))
      yield* Effect.promise(() => writeFile(bad, JSON.stringify({ steps: [{ mesage: "typo" }] })))

      const reply = yield* Provider.use((p) => collect(p.stream(plain), { now })).pipe(
        Effect.provide(Scripted.layerFromFile(good))
      )
      assert.deepStrictEqual(reply.events, [ChatResponse.message(when, "from file")])

      const missing = yield* Effect.flip(Effect.provide(getProvider, Scripted.layerFromFile(join(dir, "nope.json"))))
      assert.match(missing.message, new RegExp(`^Cannot read the model script ${join(dir, "nope.json")}: .*ENOENT`))
      const invalid = yield* Effect.flip(Effect.provide(getProvider, Scripted.layerFromFile(bad)))
      assert.match(invalid.message, new RegExp(`^Invalid model script ${bad}: .*mesage`))
      // A bare array of steps (an easy mistake) is named, with the shape a script has.
      const bare = join(dir, "bare.json")
      yield* Effect.promise(() => writeFile(bare, JSON.stringify([{ message: "hi" }])))
      const array = yield* Effect.flip(Effect.provide(getProvider, Scripted.layerFromFile(bare)))
      assert.include(array.message, `Invalid model script ${bare}: `)
      assert.include(array.message, `A script is {"steps": [{"message": "…"}, …]}`)
    })
  )
})
