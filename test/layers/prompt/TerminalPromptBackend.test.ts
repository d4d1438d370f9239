import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Terminal from "effect/Terminal"
import { AnswerType } from "../../../src/domain/tool/AnswerType.ts"
import { Question } from "../../../src/domain/tool/Question.ts"
import * as TerminalPromptBackend from "../../../src/layers/prompt/TerminalPromptBackend.ts"
import { PromptBackend } from "../../../src/services/PromptBackend.ts"
import { Keys, plain, scriptedTerminal } from "../../support/ScriptedTerminal.ts"

const withKeys = <A, E>(
  keys: ReadonlyArray<Terminal.UserInput>,
  f: (p: PromptBackend["Service"]) => Effect.Effect<A, E>
) =>
  Effect.gen(function* () {
    const { layer, frames } = yield* scriptedTerminal(keys)
    const exit = yield* Effect.exit(
      PromptBackend.use(f).pipe(Effect.provide(TerminalPromptBackend.layer), Effect.provide(layer))
    )
    return { exit, screen: plain(frames) }
  })

const q = (
  answer_type: Question["answer_type"],
  extra: Partial<{ default: boolean | string; context: string; text: string }> = {}
) => new Question({ id: "q" as Question["id"], text: extra.text ?? "Overwrite a.txt?", answer_type, ...extra })

describe("TerminalPromptBackend", () => {
  it.effect("permission: one keypress, capitals mean remember", () =>
    Effect.gen(function* () {
      for (const [k, expected] of [
        ["y", "y"],
        ["Y", "Y"],
        ["n", "n"],
        ["N", "N"]
      ] as const) {
        const { exit, screen } = yield* withKeys(Keys.type(k), (p) =>
          p.permission({ toolName: "write_note", kind: "local", arguments: {} })
        )
        expect(exit).toStrictEqual(Exit.succeed(expected))
        expect(screen).toContain("Run local write_note tool?")
      }
    })
  )

  it.effect("boolean question: y/Y/n/N, Enter takes the default, other keys beep", () =>
    Effect.gen(function* () {
      const yes = yield* withKeys([...Keys.type("x"), ...Keys.type("Y")], (p) =>
        p.question({ toolName: "t", question: q(AnswerType.boolean) })
      )
      expect(yes.exit).toStrictEqual(Exit.succeed({ answer: true, remember: true }))
      expect(yes.screen).toContain("\x07")
      const dflt = yield* withKeys([Keys.enter], (p) =>
        p.question({ toolName: "t", question: q(AnswerType.boolean, { default: false }) })
      )
      expect(dflt.exit).toStrictEqual(Exit.succeed({ answer: false, remember: false }))
    })
  )

  it.effect("prints the pre-amble and earlier lines of a multi-line question above the prompt", () =>
    Effect.gen(function* () {
      const { exit, screen } = yield* withKeys(Keys.type("n"), (p) =>
        p.question({
          toolName: "t",
          question: q(AnswerType.boolean, { context: "--- a.txt\n+++ a.txt", text: "Patch below.\nApply it?" })
        })
      )
      expect(exit).toStrictEqual(Exit.succeed({ answer: false, remember: false }))
      expect(screen.indexOf("--- a.txt")).toBeLessThan(screen.indexOf("Patch below."))
      expect(screen).toContain("Apply it?")
    })
  )

  it.effect("select and text", () =>
    Effect.gen(function* () {
      const sel = yield* withKeys([Keys.down, Keys.enter], (p) =>
        p.question({ toolName: "t", question: q(AnswerType.select(["a", "b", "c"])) })
      )
      expect(sel.exit).toStrictEqual(Exit.succeed({ answer: "b", remember: false }))
      const txt = yield* withKeys([...Keys.type("hello"), Keys.enter], (p) =>
        p.question({ toolName: "t", question: q(AnswerType.text) })
      )
      expect(txt.exit).toStrictEqual(Exit.succeed({ answer: "hello", remember: false }))
    })
  )

  it.effect("a secret is read without echo: the screen never shows it", () =>
    Effect.gen(function* () {
      const { exit, screen } = yield* withKeys([...Keys.type("s3cr3t-T0KEN"), Keys.enter], (p) =>
        p.question({ toolName: "t", question: q(AnswerType.secret, { text: "API token?" }) })
      )
      expect(exit).toStrictEqual(Exit.succeed({ answer: "s3cr3t-T0KEN", remember: false }))
      expect(screen).toContain("API token?")
      expect(screen).not.toContain("s3cr3t")
      expect(screen).not.toContain("*")
    })
  )

  it.effect("end of input (or Ctrl-C) at a prompt is a cancellation", () =>
    Effect.gen(function* () {
      const { exit } = yield* withKeys([], (p) => p.question({ toolName: "t", question: q(AnswerType.boolean) }))
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("PromptCancelled")
    })
  )
})

describe("select edge cases (found in review)", () => {
  it.effect(
    "duplicate options collapse (the default is marked once); no options is a prompt failure, not a crash",
    () =>
      Effect.gen(function* () {
        const dup = yield* withKeys([Keys.down, Keys.enter], (p) =>
          p.question({ toolName: "t", question: q(AnswerType.select(["a", "b", "a", "b"]), { default: "a" }) })
        )
        expect(dup.exit).toStrictEqual(Exit.succeed({ answer: "b", remember: false }))
        const none = yield* withKeys([Keys.enter], (p) =>
          p.question({ toolName: "t", question: q(AnswerType.select([])) })
        )
        expect(Exit.isFailure(none.exit) && String(none.exit.cause)).toContain("offers no options")
      })
  )
})

describe("hostile text (found in review; docs/security.md#text-from-the-model-tools-and-servers)", () => {
  it.effect(
    "the tool name, arguments, question, pre-amble and options reach the terminal with their escapes made visible; the value picked is the option itself",
    () =>
      Effect.gen(function* () {
        const permission = yield* withKeys(Keys.type("y"), (p) =>
          p.permission({ toolName: "rm\x1b]0;t\x07", kind: "local", arguments: { path: "\x9b2J\u202e" } })
        )
        expect(permission.exit).toStrictEqual(Exit.succeed("y"))
        expect(permission.screen).toContain("Run local rm␛]0;t␇ tool?")
        expect(permission.screen).toContain(`"path": "<U+009B>2J<U+202E>"`)
        const picked = yield* withKeys([Keys.enter], (p) =>
          p.question({
            toolName: "t",
            question: q(AnswerType.select(["a\x1b[2Jb", "b"]), { text: "Pick\x1b[31m\none?", context: "about\x07" })
          })
        )
        expect(picked.exit).toStrictEqual(Exit.succeed({ answer: "a\x1b[2Jb", remember: false }))
        expect(picked.screen).toContain("about␇\nPick␛[31m\n")
        expect(picked.screen).toContain("a␛[2Jb")
      })
  )
})
