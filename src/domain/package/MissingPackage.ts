/**
 * An optional package that a layer needs is not installed (a light install:
 * docs/decisions.md#optional-peer-dependencies): the LLM SDKs (`openai`, `@anthropic-ai/sdk`), the MCP
 * client (`@modelcontextprotocol/client`), PostgreSQL storage
 * (`@effect/sql-pg`) and the HTML renderer (`markdown-it`) are optional peer
 * dependencies of parley, so a consumer who brings their own effect/ai
 * provider installs none of them. The error carries the package and the
 * range parley was tested with; the edge renders the install command.
 *
 * @example
 * ```ts
 * import * as MissingPackage from "parley/domain/package/MissingPackage"
 *
 * const error = MissingPackage.of("openai")
 * error.message // "The OpenAI provider needs the package openai (^7.57.0), which is not installed."
 * ```
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The optional packages: what in parley needs each, and the range it was
 * tested with (package.json's `peerDependencies` say the same; a test keeps
 * them equal).
 *
 * @since 0.1.0
 */
export const optional = {
  openai: { range: "^7.57.0", feature: "The OpenAI provider" },
  "@anthropic-ai/sdk": { range: "^1.12.0", feature: "The Anthropic provider" },
  "@modelcontextprotocol/client": { range: "^2.4.0", feature: "MCP servers ([mcp.servers])" },
  "@effect/sql-pg": { range: "^4.0.5", feature: "PostgreSQL storage" },
  "markdown-it": { range: "^15.0.3", feature: "The HTML view of a conversation" }
} as const

/** @since 0.1.0 */
export type OptionalPackage = keyof typeof optional

/**
 * A layer needs `name` and it is not installed: nothing was started.
 *
 * @since 0.1.0
 */
export class MissingPackage extends Schema.TaggedError<MissingPackage>()("MissingPackage", {
  /** The npm package name (`openai`). */
  name: Schema.String,
  /** The range parley was tested with (`^7.57.0`). */
  range: Schema.String,
  /** What needs it, as a sentence's subject ("The OpenAI provider"). */
  feature: Schema.String
}) {
  override get message(): string {
    return `${this.feature} needs the package ${this.name} (${this.range}), which is not installed.`
  }
}

/**
 * The error for one of parley's optional packages.
 *
 * @since 0.1.0
 */
export const of = (name: OptionalPackage): MissingPackage => new MissingPackage({ name, ...optional[name] })
