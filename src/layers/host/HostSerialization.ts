/**
 * The host protocol's framing (docs/decisions.md#ctrl-z-detaches): newline-delimited JSON, as
 * Effect's `RpcSerialization.layerNdjson`, but each line read with
 * `JsonText.parse` (docs/decisions.md#json-read-around-a-v8-bug). Run events carry metadata, arguments and
 * answers whose object keys may hold escapes, and V8's `JSON.parse` (Node
 * 24 and 26) can misread such a key once some other text had a key its raw
 * text starts with: an attached terminal would show, and answer, a question
 * that differs from the one the run asked.
 *
 * @example
 * ```ts
 * import * as HostSerialization from "parley/layers/host/HostSerialization"
 * const parser = HostSerialization.ndjson.makeUnsafe()
 * parser.decode('{"\\t":1}\n{"a"') // [{ "\t": 1 }]; the rest waits for its newline
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Layer from "effect/Layer"
import * as RpcSerialization from "effect/rpc/RpcSerialization"
import * as JsonText from "../../domain/storage/JsonText.ts"

/** The longest line kept while waiting for its newline (Effect's default). */
const MAX_LINE = 16 * 1024 * 1024

/** A line-at-a-time decoder: the lines complete so far, the rest kept for the next chunk. */
const lineDecoder = () => {
  // Made on the first bytes: a string transport never needs one.
  let decoder: InstanceType<typeof TextDecoder> | undefined
  const text = (bytes: Uint8Array | string): string => {
    if (typeof bytes === "string") return bytes
    decoder ??= new TextDecoder()
    return decoder.decode(bytes, { stream: true })
  }
  let buffer = ""
  const overflow = (): never => {
    buffer = ""
    throw new RpcSerialization.MaxBufferSizeExceeded({ maxBufferSize: MAX_LINE })
  }
  return (bytes: Uint8Array | string): ReadonlyArray<unknown> => {
    buffer += text(bytes)
    const items: Array<unknown> = []
    let position = 0
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n", position)) {
      if (nl - position > MAX_LINE) overflow()
      const line = buffer.slice(position, buffer[nl - 1] === "\r" ? nl - 1 : nl)
      position = nl + 1
      if (line.length === 0) continue
      try {
        items.push(JsonText.parse(line))
      } catch (cause) {
        buffer = ""
        throw new RpcSerialization.NdjsonDecodeError({ cause })
      }
    }
    buffer = buffer.slice(position)
    if (buffer.length > MAX_LINE) overflow()
    return items
  }
}

/** Newline-delimited JSON whose lines are read with `JsonText.parse`; written as Effect's `ndjson` writes. */
export const ndjson: RpcSerialization.RpcSerialization["Service"] = RpcSerialization.RpcSerialization.of({
  contentType: RpcSerialization.ndjson.contentType,
  includesFraming: true,
  codecFor: RpcSerialization.ndjson.codecFor,
  makeUnsafe: () => ({ decode: lineDecoder(), encode: RpcSerialization.ndjson.makeUnsafe().encode })
})

/** The serialization both ends of the host socket use. */
export const layer: Layer.Layer<RpcSerialization.RpcSerialization> = Layer.succeed(RpcSerialization.RpcSerialization)(
  ndjson
)
