/**
 * Commands parley prints for the person to run next (docs/decisions.md#errors-carry-data: this is the one place they are built — errors carry the data,
 * the edge renders the command). Each one works when pasted into the same
 * shell, from any directory. It carries what this invocation was told and
 * the conversation does not remember — the storage directory when one was
 * given (`--storage` or `$PARLEY_STORAGE`), the `--config` file when one was
 * given, the `--model` when one was given, the scripted model's `--script`
 * and the `--detached-policy` — with every word shell-quoted. One rule
 * ({@link sameContext}) says which of them a printed command repeats: every
 * one that command takes (`--storage` and `--config` are the root's, taken
 * by all; the run's flags by the commands that run a turn or print one's
 * resume command). Callers pass the whole context. A database url is
 * repeated without its password (docs/postgres.md#passwords): a printed
 * command lands on stderr, in `detached-*.log` files and in what people
 * paste, and works again where the password comes from `PGPASSWORD` or
 * `~/.pgpass`.
 *
 * @example
 * ```ts
 * import * as Hint from "./Hint.ts"
 * Hint.command(["query", "--continue-turn", "--id", "17953588145"], { storage: "/tmp/my dir/.parley" })
 * // "parley query --continue-turn --id 17953588145 --storage '/tmp/my dir/.parley'"
 * ```
 */
import * as Predicate from "effect/Predicate"
import * as StorageDir from "../programs/StorageDir.ts"

/** What a hint must repeat so it works when pasted. */
export interface Context {
  /** The storage directory when it was given explicitly (flag or environment). */
  readonly storage?: string | undefined
  /** `--model` as given on this command line. */
  readonly model?: string | undefined
  /** The scripted model's steps (absolute path), when a script is in use. */
  readonly script?: string | undefined
  /** `--config FILE` (absolute) when it was given. */
  readonly config?: string | undefined
  /** `--detached-policy` as given (what a question does when nobody can be asked). */
  readonly detachedPolicy?: string | undefined
}

/** The run's flags (beyond the root's `--storage` and `--config`) each command takes, by its words after `parley`. */
const RUN_FLAGS: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<"model" | "script" | "detachedPolicy">]> =
  [
    [["query"], ["model", "script", "detachedPolicy"]],
    [
      ["conversation", "compact"],
      ["model", "script"]
    ],
    // `answer` prints the resume command of the turn it answers into: it takes these to repeat them.
    [
      ["conversation", "answer"],
      ["script", "detachedPolicy"]
    ]
  ]

const FLAG_NAMES = { model: "--model", script: "--script", detachedPolicy: "--detached-policy" } as const

/**
 * The flags of `context` that the command `args` (its words after `parley`)
 * takes, in one order: the run's (`--model`, `--script`,
 * `--detached-policy`) for the commands that take them, then `--storage`
 * (a database url without its password) and `--config`, which every command
 * takes. Unquoted: {@link command} quotes them for a shell.
 */
export const sameContext = (args: ReadonlyArray<string>, context: Context): Array<string> => {
  const runFlags = RUN_FLAGS.find(([words]) => words.every((w, i) => args[i] === w))?.[1] ?? []
  const flags: Array<string> = []
  for (const key of runFlags) {
    const value = context[key]
    if (value !== undefined) flags.push(FLAG_NAMES[key], value)
  }
  if (context.storage !== undefined) flags.push("--storage", shownStorage(context.storage))
  if (context.config !== undefined) flags.push("--config", context.config)
  return flags
}

/** Quotes one word for a POSIX shell (bare when it is safe). */
export const quote = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`

/**
 * How to run this parley again from a shell: `parley` when it was started
 * by that name (an npm bin link on the PATH), `npx parley` from a project's
 * node_modules/.bin (on the PATH only while npx runs it), else
 * `node <the script>` — `npm start` and `node dist/parley.mjs` in a clone,
 * where `parley` is not on the PATH.
 */
export const invokedAs = (script: string | undefined = process.argv[1]): string =>
  script === undefined
    ? "parley"
    : /\/node_modules\/\.bin\/parley$/.test(script)
      ? "npx parley"
      : /(^|\/)parley$/.test(script)
        ? "parley"
        : `node ${quote(script)}`

/** The storage as a printed command repeats it: a database url without its password, a directory as it is. */
export const shownStorage = StorageDir.shownStorage

/**
 * `parley <args>` plus the flags of `context`, quoted. A `placeholder` (such
 * as `<yes|no>`) is written as it is, right after the args: the person
 * replaces it before running the command.
 */
export const command = (args: ReadonlyArray<string>, context: Context, placeholder?: string): string =>
  [
    invokedAs(),
    ...args.map(quote),
    ...(placeholder !== undefined ? [placeholder] : []),
    ...sameContext(args, context).map(quote)
  ].join(" ")

/** The command that resumes the incomplete turn of `id`. */
export const resume = (id: string, context: Context): string =>
  command(["query", "--continue-turn", "--id", id], context)

/**
 * The command that answers the open question `inquiryId` of `id`: with
 * `value` when it is known, else a `<placeholder>` saying what fits; a
 * secret is never put on a command line (the command asks for it).
 */
export const answer = (
  id: string,
  inquiryId: string,
  value: { readonly value: string } | { readonly placeholder: string } | undefined,
  context: Context
): string =>
  value === undefined
    ? command(["conversation", "answer", id, inquiryId], context)
    : "value" in value
      ? command(["conversation", "answer", id, inquiryId, value.value], context)
      : command(["conversation", "answer", id, inquiryId], context, `<${value.placeholder}>`)

/** The command that discards the incomplete turn of `id` (no model is called: none is needed, but the flags stay the run's). */
export const discard = (id: string, context: Context): string =>
  // Discarding runs no turn: no model, script or policy to repeat.
  command(["query", "--discard-turn", "--id", id], { storage: context.storage, config: context.config })

/** The command that says what is wrong with the files of conversation `id`. */
export const check = (id: string, context: Context): string => command(["conversation", "check", id], context)

/** The command that lists every conversation id, archived ones included. */
export const listArchived = (context: Context): string => command(["conversation", "ls", "--archived"], context)

/** The command that compacts conversation `id` (RFD 064; no model is needed for the mechanical rule). */
export const compact = (id: string, context: Context): string => command(["conversation", "compact", id], context)

/**
 * The command that shows the help of `path` (effect/cli's command path, which
 * starts with the program's name: `["parley", "query"]`).
 */
export const help = (path: ReadonlyArray<string>): string => command([...path.slice(1), "--help"], {})

/**
 * The command that installs a missing optional package (docs/decisions.md#optional-peer-dependencies: a light
 * install leaves the SDKs out; the error names the package, this renders
 * the command).
 */
export const install = (missing: { readonly name: string; readonly range: string }): string =>
  `npm install ${quote(`${missing.name}@${missing.range}`)}`

/** A missing optional package behind `error` (itself, or a provider's), if any. */
const missingOf = (error: unknown): { readonly name: string; readonly range: string } | undefined => {
  if (typeof error !== "object" || error === null || !("_tag" in error)) return undefined
  const missing = error._tag === "ProviderError" && "missing" in error ? error.missing : error
  return Predicate.isTagged(missing, "MissingPackage") &&
    Predicate.hasProperty(missing, "name") &&
    Predicate.hasProperty(missing, "range") &&
    typeof missing.name === "string" &&
    typeof missing.range === "string"
    ? { name: missing.name, range: missing.range }
    : undefined
}

/** `error`'s message, followed by the install command when a package is missing. */
export const withInstall = (error: { readonly message: string }): string => {
  const missing = missingOf(error)
  return missing === undefined ? error.message : `${error.message}\n    ${install(missing)}    Install it.`
}
