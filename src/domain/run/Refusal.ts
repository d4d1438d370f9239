/**
 * Why a child `parley query` did not run, as data: a run started by
 * another process (`parley serve`) is given a file in `$PARLEY_REFUSAL`,
 * and a run that is refused writes one JSON line there before it ends. The
 * parent decodes that line; it never reads the child's prose.
 *
 * @example
 * ```ts
 * import * as Refusal from "parley/domain/run/Refusal"
 * const line = Refusal.encode(Refusal.ConversationLocked.make({ holder: 4242 })) // '{"_tag":"ConversationLocked","holder":4242}\n'
 * Refusal.decode(line) // Option.some(ConversationLocked { holder: 4242 })
 * Refusal.decode("Conversation … is being written") // Option.none()
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** The environment variable naming the file a refused run writes its {@link Refusal} into. */
export const REFUSAL = "PARLEY_REFUSAL"

/** Another process holds the conversation's lock: `holder` is its pid when the lock says it yet. */
export class ConversationLocked extends Schema.TaggedClass<ConversationLocked>()("ConversationLocked", {
  holder: Schema.optionalKey(Schema.Number)
}) {}

/** Every refusal a child reports (one kind today: the parent tells them apart by `_tag`). */
export const Refusal = Schema.Union([ConversationLocked])

/** A refusal. */
export type Refusal = typeof Refusal.Type

const Line = Schema.fromJsonString(Refusal)

/** `refusal` as the line the child writes. */
export const encode = (refusal: Refusal): string => Schema.encodeSync(Line)(refusal) + "\n"

/** The refusal in `text` (the file's content), or none when it holds none (the child ended for another reason). */
export const decode = (text: string): Option.Option<Refusal> =>
  text.trim() === "" ? Option.none() : Schema.decodeUnknownOption(Line)(text.trim())
