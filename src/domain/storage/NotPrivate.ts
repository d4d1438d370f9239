/**
 * A runtime path (a socket, its directory, a database's state directory) is
 * not this user's alone, so parley does not use it: the rule is
 * `PrivateDir.problemOf`; the edge (`cli/ErrorLine.ts`) renders the line
 * that says what to do.
 *
 * @example
 * ```ts
 * import { NotPrivate } from "parley/domain/storage/NotPrivate"
 * const e = new NotPrivate({ path: "/tmp/parley-0", want: "directory", problem: "owner", owner: 1001, mode: 0o777, uid: 0 })
 * e.message // "Refusing to use /tmp/parley-0: it belongs to uid 1001, not to you (uid 0) (owner uid 1001, mode 0777)."
 * ```
 *
 * @since 0.1.0
 * @internal
 */
import * as Schema from "effect/Schema"
import { octal, problems, wants } from "./PrivateDir.ts"

/** A runtime path is not this user's private one: parley does not use it (the edge says what to do). */
export class NotPrivate extends Schema.TaggedError<NotPrivate>()("NotPrivate", {
  path: Schema.String,
  want: Schema.Literals(wants),
  problem: Schema.Literals(problems),
  /** The owner's uid, as `lstat` saw it. */
  owner: Schema.Number,
  /** The permission bits, as `lstat` saw them. */
  mode: Schema.Number,
  /** This process's uid. */
  uid: Schema.Number
}) {
  override get message(): string {
    const what = this.want === "directory" ? "directory" : "socket"
    const why =
      this.problem === "symlink"
        ? "it is a symbolic link"
        : this.problem === "kind"
          ? `it is not a ${what}`
          : this.problem === "owner"
            ? `it belongs to uid ${this.owner}, not to you (uid ${this.uid})`
            : this.problem === "shared"
              ? "other users may write in it and it has no sticky bit"
              : "other users have access to it"
    return `Refusing to use ${this.path}: ${why} (owner uid ${this.owner}, mode ${octal(this.mode)}).`
  }
}
