/**
 * `parley conversation export [ID] --to DIR` and `parley conversation import
 * DIR` (docs/postgres.md#import-and-export): conversations between the storage (a PostgreSQL database
 * or a directory) and a JP storage directory, byte for byte — archived ones
 * stay archived (`conversations/.archive/`). Without an ID, export writes
 * every conversation. An id already at the other end is skipped with a line
 * naming it, never overwritten (exit 1). The work is in `TransferRun.ts`.
 *
 * @example
 * ```sh
 * parley --storage postgres://db.internal/parley conversation import ~/project/.jp
 * parley --storage postgres://db.internal/parley conversation export 17738399468 --to /tmp/out
 * ```
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { formatFlag } from "../Format.ts"
import { storage } from "../Root.ts"
import { parseIdArgument } from "./Shared.ts"
import { exportConversations, importConversations } from "./TransferRun.ts"

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
