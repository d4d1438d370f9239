// Which models give structured replies (RFD 034 "Structured output support"): configured, else known, else unknown.
import { describe, expect, it } from "@effect/vitest"
import * as StructuredOutput from "../../../src/domain/model/StructuredOutput.ts"
import type { Config } from "../../../src/domain/tool/Config.ts"

describe("RFD 034: StructuredOutput.supports", () => {
  it("RFD 034 structured output support: known models (a dated snapshot as its model), unknown ones undefined, config wins", () => {
    expect(StructuredOutput.supports("anthropic/claude-haiku-4-5-20251001", {})).toBe(true)
    expect(StructuredOutput.supports("anthropic/claude-3-5-haiku-20241022", {})).toBe(false)
    expect(StructuredOutput.supports("openai/gpt-4", {})).toBe(false)
    expect(StructuredOutput.supports("scripted", {})).toBe(true)
    expect(StructuredOutput.supports("openai/my-local-model", {})).toBeUndefined()
    const config: Config = {
      providers: {
        openai: { models: { "my-local-model": { structured_output: false }, "gpt-4": { structured_output: true } } }
      }
    }
    expect(StructuredOutput.supports("openai/my-local-model", config)).toBe(false)
    expect(StructuredOutput.supports("openai/gpt-4", config)).toBe(true)
  })
})
