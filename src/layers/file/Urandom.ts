/**
 * OS random bytes read from `/dev/urandom`, for event ids in the CLI (`EventId.useRandomSource`):
 * the kernel's source Web Crypto draws from too, without loading Node's Web Crypto stack (its
 * first use costs a scripted query turn about 4% of its instructions, docs/benchmarks.md,
 * start-up of a query). Where there is no `/dev/urandom` (Windows) the read throws and
 * `EventId` goes back to Web Crypto.
 *
 * @example
 * ```ts
 * import * as EventId from "parley/domain/storage/EventId"
 * import * as Urandom from "parley/layers/file/Urandom"
 * EventId.useRandomSource(Urandom.fill)
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as fs from "node:fs"
import * as EventId from "../../domain/storage/EventId.ts"

/** Fills `buffer` from `/dev/urandom`; throws when it cannot be read whole. */
export const fill = (buffer: Uint8Array): void => {
  const fd = fs.openSync("/dev/urandom", "r")
  try {
    let at = 0
    while (at < buffer.length) {
      const n = fs.readSync(fd, buffer, at, buffer.length - at, null)
      if (n <= 0) throw new Error("/dev/urandom: short read")
      at += n
    }
  } finally {
    fs.closeSync(fd)
  }
}

/** Event ids of this process from `/dev/urandom` (the CLI's entries call it before anything draws one). */
export const useForEventIds = (): void => EventId.useRandomSource(fill)
