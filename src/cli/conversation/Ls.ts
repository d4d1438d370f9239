/**
 * `parley conversation ls [--archived] [--format json]`: conversations,
 * most recently active first, with their incomplete-turn state (RFD 023).
 * Reads metadata and a validated sidecar index, never whole event logs that
 * did not change.
 *
 * @example
 * ```sh
 * parley conversation ls --archived --format json
 * ```
 */
import * as Effect from "effect/Effect"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { formatFlag } from "../Format.ts"
import { storage } from "../Root.ts"
import { list } from "./LsRun.ts"

export { toJsonRow } from "../../services/ConversationRows.ts"

export const ls = Command.make(
  "ls",
  {
    archived: Flag.Boolean("archived").pipe(
      Flag.withDescription("Include archived conversations"),
      Flag.withDefault(false)
    ),
    format: formatFlag
  },
  ({ archived, format }) => Effect.flatMap(storage, (at) => list({ archived, format }, at))
).pipe(Command.withDescription("List conversations (most recently active first)"))
