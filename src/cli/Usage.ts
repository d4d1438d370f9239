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
 * Command.run(cli, { version }).pipe(Effect.provide(Usage.layer))
 * // parley query --no-such-flag
 * // parley: unrecognized flag --no-such-flag for `parley query`
 * // Run `parley query --help` for usage.
 * ```
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import { CliFailure } from "./CliFailure.ts"
import * as Hint from "./Hint.ts"

/** Where to read more. */
export const helpHint = (commandPath: ReadonlyArray<string>): string => `Run \`${Hint.help(commandPath)}\` for usage.`

/** A usage error of our own (conflicting flags, a malformed id): what is wrong, where to look, exit 2. */
export const failure = (commandPath: ReadonlyArray<string>, message: string): CliFailure =>
  new CliFailure({ code: 2, message: `${message}\n${helpHint(commandPath)}` })

/** One line for a parse error, with a suggestion when effect/cli has one. */
export const describe = (error: CliError.NonShowHelpErrors, commandPath: ReadonlyArray<string>): string => {
  const where = `\`${commandPath.join(" ")}\``
  const suggest = (suggestions: ReadonlyArray<string>) =>
    suggestions.length > 0 ? ` (did you mean ${suggestions.slice(0, 3).join(", ")}?)` : ""
  switch (error._tag) {
    case "UnrecognizedOption":
      return `unrecognized flag ${error.option} for ${where}${suggest(error.suggestions)}`
    case "UnknownSubcommand":
      return `unknown subcommand "${error.subcommand}" for ${where}${suggest(error.suggestions)}`
    case "MissingOption":
      return `${where} needs --${error.option}`
    case "MissingArgument":
      return `${where} needs <${error.argument}>`
    default:
      return error.message.split("\n")[0]!.replace(/^[A-Z]/, (c) => c.toLowerCase())
  }
}

/** The lines of an invalid invocation: what is wrong, then where to look. */
export const invalid = (event: CliOutput.Presenter.InvalidInvocation): ReadonlyArray<string> => {
  const first = event.errors[0]
  const what = first === undefined ? "invalid command line" : describe(first, event.commandPath)
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

export const presenter: CliOutput.Presenter = {
  present: (event) =>
    Effect.gen(function* () {
      switch (event._tag) {
        case "InvalidInvocation":
          return yield* Console.error(invalid(event).join("\n"))
        case "Help":
          if (event.reason === "Implicit") return yield* Console.error(subcommandNeeded(event).join("\n"))
          return yield* CliOutput.defaultPresenter.present(event)
        default:
          return yield* CliOutput.defaultPresenter.present(event)
      }
    })
}

/** The presenter as a layer, for `Command.run`. */
export const layer: Layer.Layer<never> = CliOutput.layerPresenter(presenter)
