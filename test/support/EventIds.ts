import { expect } from "@effect/vitest"

/**
 * Entries with their `event_id` checked and removed, so a test can compare recorded shapes exactly:
 * every entry parley writes carries a fresh id (JP's RFD 097 format, 7 characters of 0-9a-z), and the
 * entries a test wrote itself carry none. `test/cli/JpToday.test.ts` holds what the ids themselves must be.
 */
export const withoutEventIds = <E extends Record<string, unknown>>(entries: ReadonlyArray<E>): Array<E> =>
  entries.map((entry) => {
    if (!("event_id" in entry)) return entry
    const { event_id, ...rest } = entry
    expect(event_id).toMatch(/^[0-9a-z]{7}$/)
    return rest as E
  })
