/**
 * The `--detached-policy` flag (docs/decisions.md#detached-policy): what a
 * question for a person does when nobody can be asked. `query` runs by it;
 * `conversation answer` takes it to repeat it in the resume command it
 * prints (`Hint.ts`). One definition, so both read it alike.
 *
 * @example
 * ```ts
 * import { detachedPolicyFlag } from "./DetachedPolicyFlag.ts"
 * Command.make("query", { detachedPolicy: detachedPolicyFlag }, (f) => Effect.log(f.detachedPolicy))
 * ```
 */
import * as Flag from "effect/cli/Flag"
import { DetachedPolicy } from "../domain/tool/Config.ts"

export const detachedPolicyFlag = Flag.Literals("detached-policy", DetachedPolicy.literals).pipe(
  Flag.withDescription(
    "What a question for a person does when nobody can be asked: assistant, wait, defer (exit 3) or deny (default: wait for a run started with --detach, by serve or left with Ctrl-Z; the resumed turn's; else assistant)"
  ),
  Flag.optional
)
