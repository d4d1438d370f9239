/**
 * How an error names a JSON value that has the wrong shape: its kind for
 * containers (`an object`, `an array`, `null`), its type and text for the rest
 * (`number 3`, `string "x"`). One home for the wording the entry decoder
 * (`EntryCodec.ts`) and the compaction reader (`Compaction.ts`) share.
 *
 * @example
 * ```ts
 * import { describeValue } from "parley/domain/event/Describe"
 * describeValue([1]) // "an array"
 * describeValue(3) // "number 3"
 * ```
 *
 * @since 0.1.0
 * @internal
 */
export const describeValue = (v: unknown): string =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "an array"
      : typeof v === "object"
        ? "an object"
        : `${typeof v} ${JSON.stringify(v)}`
