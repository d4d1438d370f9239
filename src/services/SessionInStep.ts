/**
 * A session's append and snapshot taken in the caller's own step: what the
 * coordinator does five times per tool call (docs/benchmarks.md#coordinator).
 * An append as an effect of its own was three steps of Effect's runtime (its
 * mask, its result, the caller's `flatMap`); begun here, an append that ends
 * as it starts (the memory store, nobody ahead in line) gives its `Exit` back
 * and the caller goes on in that same step.
 *
 * Not part of the package: {@link appendInStep} takes the session's writer
 * lock as it is called, and only the effect it returns releases it, so a
 * caller that dropped that effect (or let an interrupt land before it ran)
 * would leave every later append of the session waiting. The coordinator
 * calls it inside `uninterruptibleMask`'s function and runs what it returns
 * right there.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { StreamEntry } from "../domain/event/ConversationEvent.ts"
import type { AppendRejected, StoreIoError } from "./StoreErrors.ts"

/**
 * The entries at one instant: `ConversationSession.Snapshot`, spelled here
 * by its shape (that module makes sessions and registers them here, so
 * this one names none of its types: no import cycle).
 */
interface Snapshot {
  readonly length: number
  readonly entries: ReadonlyArray<StreamEntry>
}

/** What of a `ConversationSession` this module reads: its effects. */
interface Session {
  append(entries: ReadonlyArray<StreamEntry>): Effect.Effect<void, AppendRejected | StoreIoError>
  readonly snapshot: Effect.Effect<Snapshot>
}

/**
 * What a session made by `ConversationSession.make` also does in the
 * caller's own step: not part of the service's contract, so a session made
 * otherwise (a test's double) is used through its effects.
 */
export interface InStep {
  /** The session's own `append` and `snapshot`: a session that has others (a wrapper) is not this one. */
  readonly append: Session["append"]
  readonly snapshot: Session["snapshot"]
  appendInStep(entries: ReadonlyArray<StreamEntry>): Effect.Effect<void, AppendRejected | StoreIoError>
  snapshotInStep(): Snapshot
}

/** Each session `make` made, with its in-step operations (a wrapper is another object: not found). */
const inSteps = new WeakMap<Session, InStep>()

/** Called by `ConversationSession.make` for the session it made. */
export const register = (session: Session, inStep: InStep): void => {
  inSteps.set(session, inStep)
}

/**
 * The in-step operations of `session`, when they are its own: a wrapper
 * (`{ ...session, append }`, a prototype, a proxy) is another object, and a
 * session whose `append` or `snapshot` was replaced in place is not the one
 * they belong to; both are used through their effects, or what replaced
 * them would be bypassed.
 */
const inStepOf = (session: Session): InStep | undefined => {
  const inStep = inSteps.get(session)
  return inStep !== undefined && inStep.append === session.append && inStep.snapshot === session.snapshot
    ? inStep
    : undefined
}

/**
 * `session.append(entries)`, begun in the caller's step, which must be an
 * uninterruptible step of a running fiber (inside `uninterruptibleMask`'s
 * function, say) that runs what this returns: with the writer lock free, the
 * write starts now (an `Exit` when it ended as it started); with it held,
 * the effect that waits in line.
 */
export const appendInStep = (
  session: Session,
  entries: ReadonlyArray<StreamEntry>
): Exit.Exit<void, AppendRejected | StoreIoError> | Effect.Effect<void, AppendRejected | StoreIoError> =>
  inStepOf(session)?.appendInStep(entries) ?? session.append(entries)

/**
 * The session's snapshot as it stands, read in the caller's step, or
 * `undefined` for a session that only has the effect (`session.snapshot`).
 */
export const snapshotInStep = (session: Session): Snapshot | undefined => inStepOf(session)?.snapshotInStep()

/**
 * {@link appendInStep}, then `next`: in the same step when the append ended
 * as it started, after it otherwise; its failure as the append's. Called as
 * `appendInStep` is, in an uninterruptible step that runs what this returns.
 */
export const appendThen = <A, E, R>(
  session: Session,
  entries: ReadonlyArray<StreamEntry>,
  next: () => Effect.Effect<A, E, R>
): Effect.Effect<A, E | AppendRejected | StoreIoError, R> => {
  const appended = appendInStep(session, entries)
  if (!Exit.isExit(appended)) return Effect.flatMap(appended, next)
  return Exit.isSuccess(appended) ? next() : Effect.failCause(appended.cause)
}
