/**
 * What a renderer keeps of what it made (`parley serve`'s drawn pages, its
 * rendered Markdown): the most recently used entries, within a count and a
 * total size, the least recently used dropped first. An entry larger than
 * its own bound is not kept: it would push out most of the others.
 *
 * @example
 * ```ts
 * import { Bounded } from "parley/domain/render/Bounded"
 * const kept = new Bounded<string, string>({ maxSize: 10, maxEntrySize: 6 })
 * kept.set("a", "12345", 5)
 * kept.set("b", "123456", 6) // 11 in all: "a", the least recently used, is dropped
 * kept.get("a") // undefined
 * ```
 *
 * @since 0.1.0
 * @internal
 */
export class Bounded<K, V> {
  /** In use order: the least recently used first. */
  private readonly entries = new Map<K, { readonly value: V; readonly size: number }>()
  private total = 0

  constructor(
    private readonly bounds: {
      readonly maxEntries?: number
      readonly maxSize: number
      readonly maxEntrySize: number
    }
  ) {}

  /** The value kept under `key`, now the most recently used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /** Keeps `value` (of `size`) as the most recently used, dropping the least recently used past the bounds. */
  set(key: K, value: V, size: number): void {
    this.delete(key)
    if (size > this.bounds.maxEntrySize) return
    this.entries.set(key, { value, size })
    this.total += size
    const maxEntries = this.bounds.maxEntries ?? Number.POSITIVE_INFINITY
    for (const [old, entry] of this.entries) {
      if (this.entries.size <= maxEntries && this.total <= this.bounds.maxSize) break
      this.entries.delete(old)
      this.total -= entry.size
    }
  }

  delete(key: K): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.total -= entry.size
  }
}
