/**
 * Builds a Schema class instance from fields that are already known to be
 * valid, without parsing them again.
 *
 * `new Class(fields, { disableChecks: true })` still walks every field
 * (4–7 µs per event here), which dominated decoding a large `events.json`
 * and the coordinator's per-event cost. The decoder has validated the
 * fields itself; the coordinator builds them from a clock reading and
 * values the executor validated. The result is the same instance a
 * constructor makes: the class's prototype with the fields as own
 * properties (every field must be given, defaults included).
 *
 * @example
 * ```ts
 * import { trusted } from "parley/domain/event/Trusted"
 * import { TurnStart } from "parley/domain/event/TurnStart"
 * import * as Timestamp from "parley/domain/event/Timestamp"
 * const e = trusted(TurnStart, { timestamp: Timestamp.now(), type: "turn_start", metadata: {} })
 * e instanceof TurnStart // true
 * ```
 *
 * @since 0.1.0
 * @internal
 */
export const trusted = <P, I extends object>(Class: new (props: P, ...rest: ReadonlyArray<never>) => I, fields: P): I =>
  Object.assign(Object.create(Class.prototype) as I, fields)
