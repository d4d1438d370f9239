/**
 * Usage errors the way the README promises (docs/cli.md#commands): one line on
 * stderr that says what is wrong, one that says where to look, exit 2 —
 * never the whole help on stdout. `--help` still prints the help to stdout.
 *
 * This is effect/cli's `Presenter`, replaced: `Command.run` hands it help,
 * version and invalid-invocation events.
 *
 * @example
 * ```ts
 * import * as Usage from "./Usage.ts"
 * Command.run(cli, { version }).pipe(Effect.provide(Usage.layerOf(cli)))
 * // parley query --no-such-flag
 * // parley: unrecognized flag --no-such-flag for `parley query`
 * // Run `parley query --help` for usage.
 * // parley ls
 * // parley: unknown subcommand "ls" for `parley` (did you mean `parley conversation ls`?)
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import type * as Command from "effect/cli/Command"
import { CliFailure } from "./CliFailure.ts"
import * as Hint from "./Hint.ts"

/** Where to read more. */
export const helpHint = (commandPath: ReadonlyArray<string>): string => `Run \`${Hint.help(commandPath)}\` for usage.`

/** A usage error of our own (conflicting flags, a malformed id): what is wrong, where to look, exit 2. */
export const failure = (commandPath: ReadonlyArray<string>, message: string): CliFailure =>
  new CliFailure({ code: 2, message: `${message}\n${helpHint(commandPath)}` })

/**
 * The commands one level down of each command of `command`'s: `ls` → `conversation`. A
 * subcommand typed without its parent (`parley ls`) is suggested with it.
 */
export const nestedOf = (command: Command.Command.Any): ReadonlyMap<string, string> => {
  const nested = new Map<string, string>()
  for (const group of command.subcommands)
    for (const parent of group.commands)
      for (const inner of parent.subcommands)
        for (const child of inner.commands) if (!nested.has(child.name)) nested.set(child.name, parent.name)
  return nested
}

/** One line for a parse error, with a suggestion when effect/cli has one (or `nested` knows the name one level down). */
export const describe = (
  error: CliError.NonShowHelpErrors,
  commandPath: ReadonlyArray<string>,
  nested: ReadonlyMap<string, string> = new Map()
): string => {
  const where = `\`${commandPath.join(" ")}\``
  const suggest = (suggestions: ReadonlyArray<string>) =>
    suggestions.length > 0 ? ` (did you mean ${suggestions.slice(0, 3).join(", ")}?)` : ""
  switch (error._tag) {
    case "UnrecognizedOption":
      return `unrecognized flag ${error.option} for ${where}${suggest(error.suggestions)}`
    case "UnknownSubcommand": {
      const parent = commandPath.length === 1 ? nested.get(error.subcommand) : undefined
      const hint =
        parent !== undefined
          ? ` (did you mean \`${Hint.command([parent, error.subcommand], {})}\`?)`
          : suggest(error.suggestions)
      return `unknown subcommand "${error.subcommand}" for ${where}${hint}`
    }
    case "MissingOption":
      return `${where} needs --${error.option}`
    case "MissingArgument":
      return `${where} needs <${error.argument}>`
    default:
      return error.message.split("\n")[0]!.replace(/^[A-Z]/, (c) => c.toLowerCase())
  }
}

/** The lines of an invalid invocation: what is wrong, then where to look. */
export const invalid = (
  event: CliOutput.Presenter.InvalidInvocation,
  nested: ReadonlyMap<string, string> = new Map()
): ReadonlyArray<string> => {
  const first = event.errors[0]
  const what = first === undefined ? "invalid command line" : describe(first, event.commandPath, nested)
  return [`parley: ${what}`, helpHint(event.commandPath)]
}

/** A command that needs a subcommand was given none. */
const subcommandNeeded = (event: CliOutput.Presenter.Help): ReadonlyArray<string> => {
  const names = (event.helpDoc.subcommands ?? []).flatMap((group) => group.commands.map((c) => c.name))
  return [
    `parley: \`${event.commandPath.join(" ")}\` needs a subcommand${names.length > 0 ? `: ${names.join(", ")}` : ""}`,
    helpHint(event.commandPath)
  ]
}

/** The presenter of `cli`'s usage errors. */
export const presenterOf = (cli: Command.Command.Any): CliOutput.Presenter => {
  const nested = nestedOf(cli)
  return {
    present: (event) =>
      Effect.gen(function* () {
        switch (event._tag) {
          case "InvalidInvocation":
            return yield* Console.error(invalid(event, nested).join("\n"))
          case "Help":
            if (event.reason === "Implicit") return yield* Console.error(subcommandNeeded(event).join("\n"))
            return yield* CliOutput.defaultPresenter.present(event)
          default:
            return yield* CliOutput.defaultPresenter.present(event)
        }
      })
  }
}

/** The presenter of `cli` as a layer, for `Command.run`. */
export const layerOf = (cli: Command.Command.Any): Layer.Layer<never> => CliOutput.layerPresenter(presenterOf(cli))
