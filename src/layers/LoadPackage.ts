/**
 * Loads an optional package when a layer needs it (a light install:
 * docs/decisions.md#optional-peer-dependencies): `import()` at the moment of use, and a {@link MissingPackage}
 * naming the package when it is not installed — not Node's
 * `ERR_MODULE_NOT_FOUND` from deep inside a layer. Any other failure to load
 * (a broken install) is a defect: it is not the consumer's choice.
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as LoadPackage from "parley/layers/LoadPackage"
 *
 * const sdk = LoadPackage.load("openai", () => import("openai"))
 * // Effect<typeof import("openai"), MissingPackage>
 * const program = sdk.pipe(Effect.map((m) => typeof m.default))
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Predicate from "effect/Predicate"
import * as Effect from "effect/Effect"
import * as MissingPackage from "../domain/package/MissingPackage.ts"

/**
 * Whether `cause` says that `name` itself (not something it imports) could
 * not be found: Node names the package in its message.
 *
 * @since 0.1.0
 */
export const isNotFound = (cause: unknown, name: string): boolean => {
  if (!Predicate.isObject(cause)) return false
  const code = cause["code"]
  const message = String(cause["message"] ?? "")
  return (
    (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
    (message.includes(`'${name}'`) || message.includes(`"${name}"`) || message.includes(`'${name}/`))
  )
}

/**
 * Imports an optional package: its module, or `MissingPackage` when it is
 * not installed.
 *
 * @since 0.1.0
 */
export const load = <A>(
  name: MissingPackage.OptionalPackage,
  importer: () => Promise<A>
): Effect.Effect<A, MissingPackage.MissingPackage> =>
  Effect.tryPromise({ try: importer, catch: (cause) => cause }).pipe(
    Effect.catch((cause) => (isNotFound(cause, name) ? Effect.fail(MissingPackage.of(name)) : Effect.die(cause))),
    Effect.withSpan("parley.load_package", { attributes: { "parley.package": name } })
  )
