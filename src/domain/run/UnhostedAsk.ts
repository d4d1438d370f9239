/**
 * Which rows of a listing may hold a killed `parley ask`'s question (docs/ask.md): the rule of
 * `programs/UnhostedAsks.ts`, which closes them. Plain code: the listing's fast path
 * (`cli/conversation/LsFast.ts`) leaves a listing with any such row to the program.
 *
 * @internal
 * @example
 * ```ts
 * import * as UnhostedAsk from "parley/domain/run/UnhostedAsk"
 * import type { Row } from "parley/domain/run/UnhostedAsk"
 * declare const rows: ReadonlyArray<Row>
 * UnhostedAsk.of(rows, new Map()) // the ids of the rows where an asker may have been killed
 * ```
 */
import type { IncompleteSummary } from "../stream/IncompleteTurn.ts"
import type { WaitingQuestion } from "../stream/OpenQuestions.ts"

/** What the rule reads of a listing's row (a store's `ConversationSummary`). */
export interface Row<Id extends string = string> {
  readonly id: Id
  readonly incomplete: IncompleteSummary | null
  readonly waiting?: ReadonlyArray<WaitingQuestion> | undefined
}

// AskDomain.TOOL and CALL_PREFIX, not imported: that module loads effect/Schema, which a listing never needs.
const ASK_TOOL = "ask"
const ASK_CALL_PREFIX = "ask_"

/**
 * The conversations whose row says a `parley ask` waits there while no live
 * asker hosts it (`running`: the conversations whose host answers): its
 * asker may have been killed.
 */
export const of = <Id extends string>(
  rows: ReadonlyArray<Row<Id>>,
  running: ReadonlyMap<string, unknown>
): ReadonlyArray<Id> =>
  rows
    .filter(
      (r) =>
        r.incomplete?.state === "waiting-for-input" &&
        r.incomplete.tool === ASK_TOOL &&
        !running.has(r.id) &&
        (r.waiting === undefined || r.waiting.some((q) => q.toolCallId.startsWith(ASK_CALL_PREFIX)))
    )
    .map((r) => r.id)
