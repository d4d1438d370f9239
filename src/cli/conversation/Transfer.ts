/**
 * `parley conversation export [ID] --to DIR` and `parley conversation import
 * DIR` (docs/postgres.md#import-and-export): conversations between the storage (a PostgreSQL database
 * or a directory) and a JP storage directory, byte for byte — archived ones
 * stay archived (`conversations/.archive/`). Without an ID, export writes
 * every conversation. An id already at the other end is skipped with a line
 * naming it, never overwritten (exit 1). The work is the library's
 * (`layers/store/StorageTransfer.ts`); this module reads the command lines and renders.
 *
 * @example
 * ```sh
 * parley --storage postgres://db.internal/parley conversation import ~/project/.jp
 * parley --storage postgres://db.internal/parley conversation export 17738399468 --to /tmp/out
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as ConversationId from "../../domain/storage/ConversationId.ts"
import * as Storage from "../../domain/storage/Storage.ts"
import * as StorageTransfer from "../../layers/store/StorageTransfer.ts"
import type { ConversationNotFound } from "../../services/StoreErrors.ts"
import { CliFailure } from "../CliFailure.ts"
import * as ErrorLine from "../ErrorLine.ts"
import { formatFlag } from "../Format.ts"
import { storage } from "../Root.ts"
import { parseIdArgument } from "./Shared.ts"
import type { StorageAt } from "./Store.ts"

const plural = (n: number) => `${n} conversation${n === 1 ? "" : "s"}`

const skippedLine = (id: string, where: string) =>
  Console.error(
    `parley: skipped ${ConversationId.display(id as ConversationId.ConversationId)}: ${where} has a conversation with this id already; it was not overwritten.`
  )

/** A transfer's error as the command's one line (the storage's names only where an id was not found). */
const failure =
  (at: StorageAt) =>
  (e: StorageTransfer.TransferFailed | StorageTransfer.StoreFailed | ConversationNotFound): CliFailure =>
    new CliFailure({
      code: 1,
      message:
        e._tag === "TransferFailed"
          ? e.message
          : e._tag === "StoreFailed"
            ? ErrorLine.line(e.cause, {})
            : ErrorLine.line(e, { storage: at.given, config: at.configGiven })
    })

const exportConversations = (
  options: { readonly id: ConversationId.ConversationId | undefined; readonly to: string; readonly format: string },
  at: StorageAt
) =>
  Effect.gen(function* () {
    const { to, total, exported, skipped } = yield* StorageTransfer.exportTo(
      Storage.of(at.dir),
      options,
      skippedLine
    ).pipe(Effect.mapError(failure(at)))
    if (options.format === "json") yield* Console.log(JSON.stringify({ to, exported, skipped }, null, 2))
    else
      yield* Console.log(total === 0 ? "No conversations to export." : `Exported ${plural(exported.length)} to ${to}.`)
    if (skipped.length > 0)
      return yield* new CliFailure({
        code: 1,
        message: `${plural(skipped.length)} not exported: ${to} has ${skipped.length === 1 ? "it" : "them"} already.`
      })
  })

const importConversations = (options: { readonly from: string; readonly format: string }, at: StorageAt) =>
  Effect.gen(function* () {
    const { from, into, total, done } = yield* StorageTransfer.importFrom(
      Storage.of(at.dir),
      options,
      skippedLine
    ).pipe(Effect.mapError(failure(at)))
    const kept = done["kept-as-files"].length
    if (options.format === "json") {
      yield* Console.log(
        JSON.stringify(
          { from, imported: done.imported, kept_as_files: done["kept-as-files"], skipped: done.exists },
          null,
          2
        )
      )
    } else {
      yield* Console.log(
        total === 0
          ? `${from} holds no conversations.`
          : `Imported ${plural(done.imported.length + kept)} from ${from}.` +
              (kept > 0
                ? ` ${plural(kept)} parley cannot read (or would re-save differently) ${kept === 1 ? "is" : "are"} kept as ${kept === 1 ? "its" : "their"} files: listed as damaged, exported as they came.`
                : "")
      )
    }
    if (done.exists.length > 0)
      return yield* new CliFailure({
        code: 1,
        message: `${plural(done.exists.length)} not imported: ${into} has ${done.exists.length === 1 ? "it" : "them"} already.`
      })
  })

export const exportCommand = Command.make(
  "export",
  {
    id: Argument.String("id").pipe(
      Argument.withDescription("The conversation to export (default: all, archived ones too)"),
      Argument.optional
    ),
    to: Flag.String("to").pipe(
      Flag.withDescription(
        "The storage directory to write into (made when missing; conversations already there are not overwritten)"
      )
    ),
    format: formatFlag
  },
  ({ id, to, format }) =>
    Effect.gen(function* () {
      const cid = Option.isSome(id) ? yield* parseIdArgument(id.value, "export") : undefined
      return yield* exportConversations({ id: cid, to, format }, yield* storage)
    })
).pipe(Command.withDescription("Write conversations into a JP storage directory, byte for byte"))

export const importCommand = Command.make(
  "import",
  {
    from: Argument.String("dir").pipe(
      Argument.withDescription("A JP storage directory (the folder holding conversations/, such as .jp or .parley)")
    ),
    format: formatFlag
  },
  ({ from, format }) => Effect.flatMap(storage, (at) => importConversations({ from, format }, at))
).pipe(
  Command.withDescription(
    "Read every conversation of a JP storage directory into the storage (ids already there are skipped)"
  )
)
