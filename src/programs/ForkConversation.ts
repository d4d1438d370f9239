/**
 * `parley conversation fork` as a program (RFD 023): a new conversation with
 * the source's events (`domain/stream/Fork.ts` cuts them at `from` and
 * `until`, its incomplete turn included), its title, and a fresh
 * `last_activated_at`. With rules (JP's `fork --compact`), the fork's
 * compactions are appended before anyone can open it: the fork is complete
 * on disk before it is visible, under an id no other process can take.
 *
 * @internal
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as ForkConversation from "parley/programs/ForkConversation"
 * import type * as ConversationId from "parley/domain/storage/ConversationId"
 * declare const source: ConversationId.ConversationId
 * const newId = ForkConversation.fork({ source, until: "2026-03-18 14:00:00" })
 * ```
 */
import * as Effect from "effect/Effect"
import * as Timestamp from "../domain/event/Timestamp.ts"
import type * as ConversationId from "../domain/storage/ConversationId.ts"
import * as ConversationMetadata from "../domain/storage/ConversationMetadata.ts"
import type * as Compact from "../domain/stream/Compact.ts"
import { fork as forkEntries } from "../domain/stream/Fork.ts"
import { ConversationStore } from "../services/ConversationStore.ts"
import { compact } from "./CompactConversation.ts"

/** What to fork. */
export interface ForkInput {
  readonly source: ConversationId.ConversationId
  /** Keep events stamped at or after this instant (inclusive). */
  readonly from?: string | undefined
  /** Keep events stamped before this instant. */
  readonly until?: string | undefined
  /** Compaction rules applied to the fork as it is made (none: the fork is not compacted). */
  readonly rules?: ReadonlyArray<Compact.Rule> | undefined
}

/** Forks `input.source`; the new conversation's id. */
export const fork = (input: ForkInput) =>
  Effect.gen(function* () {
    const store = yield* ConversationStore
    const source = yield* store.load(input.source)
    const now = yield* Timestamp.current
    return yield* Effect.scoped(
      Effect.flatMap(
        store.create({
          metadata: ConversationMetadata.make({
            ...(source.metadata.title !== undefined ? { title: source.metadata.title } : {}),
            last_activated_at: now
          }),
          baseConfig: source.baseConfig,
          entries: forkEntries(source.entries, {
            ...(input.from !== undefined ? { from: input.from } : {}),
            ...(input.until !== undefined ? { until: input.until } : {})
          })
        }),
        (session) =>
          input.rules === undefined
            ? Effect.succeed(session.id)
            : compact({ session, rules: input.rules, dryRun: false }).pipe(Effect.as(session.id))
      )
    )
  })
