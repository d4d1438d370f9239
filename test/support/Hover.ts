/**
 * What a consumer's editor shows on the namespaces parley exports (docs/library.md#public-modules:
 * "module docs visible on namespace hovers"), read with TypeScript's own
 * language service, the engine behind an IDE's hover.
 *
 * A consumer file imports each namespace by name (`import { Events } from
 * "parley"`) and uses it; `getQuickInfoAtPosition` on each use must carry
 * documentation. A second file names every type each namespace's module
 * exports (`Events.SomeType`, generics given `never` for each parameter
 * without a default), so the docs do not cost a type; it must have no
 * errors. Resolution is the caller's: `paths` into src/ (test/docs) or the
 * installed tarball's .d.ts (test/package).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"

export interface HoverInput {
  /** A folder the consumer files go in (under a node_modules that has `effect` and `@types/node`). */
  readonly dir: string
  readonly options: ts.CompilerOptions
  /** Namespace names by the specifier a consumer imports them from. */
  readonly namespaces: ReadonlyArray<readonly [specifier: string, names: ReadonlyArray<string>]>
  /** Extra consumer code checked with the type accesses (explicit generics). */
  readonly extra?: string
}

export interface HoverReport {
  /** Each namespace's hover: its documentation text ("" when the editor shows none). */
  readonly docs: Record<string, string>
  /** How many `X.Type` accesses the second file made. */
  readonly typeAccesses: number
  /** The consumer files' errors, as `file(line): message`. */
  readonly errors: ReadonlyArray<string>
}

const serviceFor = (
  files: ReadonlyArray<string>,
  versions: Map<string, number>,
  options: ts.CompilerOptions,
  dir: string
) =>
  ts.createLanguageService(
    {
      getScriptFileNames: () => [...files],
      getScriptVersion: (f) => String(versions.get(f) ?? 0),
      getScriptSnapshot: (f) =>
        fs.existsSync(f) ? ts.ScriptSnapshot.fromString(fs.readFileSync(f, "utf8")) : undefined,
      getCurrentDirectory: () => dir,
      getCompilationSettings: () => options,
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      fileExists: ts.sys.fileExists,
      readFile: ts.sys.readFile,
      readDirectory: ts.sys.readDirectory,
      directoryExists: ts.sys.directoryExists,
      getDirectories: ts.sys.getDirectories,
      realpath: ts.sys.realpath!
    },
    ts.createDocumentRegistry()
  )

/** `X.Name` for every type `X`'s module exports, with `never` for each parameter that has no default. */
const typeAccesses = (program: ts.Program, file: string, names: ReadonlyArray<string>): Array<string> => {
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)!
  const uses = new Map<string, ts.Identifier>()
  const visit = (n: ts.Node): void => {
    if (ts.isExpressionStatement(n) && ts.isIdentifier(n.expression)) uses.set(n.expression.text, n.expression)
    ts.forEachChild(n, visit)
  }
  visit(source)
  return names.flatMap((name) => {
    // The value's type is the module's namespace object, whichever form re-exports it.
    const moduleSymbol = checker.getTypeAtLocation(uses.get(name)!).getSymbol()
    if (moduleSymbol === undefined) return [`type _${name} = never // ${name}: no module behind it`]
    return checker.getExportsOfModule(moduleSymbol).flatMap((e) => {
      const target = e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e
      if (!(target.flags & ts.SymbolFlags.Type)) return []
      const parameters: ReadonlyArray<ts.TypeParameterDeclaration> =
        target.declarations
          ?.flatMap((d) =>
            ts.isTypeAliasDeclaration(d) || ts.isInterfaceDeclaration(d) || ts.isClassDeclaration(d)
              ? [d.typeParameters ?? []]
              : []
          )
          .at(0) ?? []
      const required = parameters.filter((p) => p.default === undefined).length
      const args = required === 0 ? "" : `<${Array(required).fill("never").join(", ")}>`
      return [`export type _${name}_${e.name} = ${name}.${e.name}${args}`]
    })
  })
}

/** The exports whose value is a module namespace object, whatever form re-exports them. */
export const namespacesOf = (entry: object): Array<string> =>
  Object.entries(entry)
    .filter(
      ([, v]) => typeof v === "object" && v !== null && (v as Record<symbol, unknown>)[Symbol.toStringTag] === "Module"
    )
    .map(([k]) => k)
    .sort()

/** Generics with their parameters, as a consumer writes them (each namespace imported by name). */
export const genericUses = `
const started: RunEvent.Of<"ToolCallsAnnounced"> = { _tag: "ToolCallsAnnounced", calls: [] }
declare const ask: Inquiry.Ask<boolean>
const read: boolean | undefined = ask.read(true)
declare const options: ExecutorLive.LayerOptions
declare const query: Query.QueryOptions<"oops">
declare const chooser: Query.ModelChooser<"oops">
export { started, read, options, query, chooser }
`

export const hoverProbe = (input: HoverInput): HoverReport => {
  // .mts: an ES module in a NodeNext consumer too, whatever its package.json says.
  const uses = path.join(input.dir, "hover-uses.mts")
  const types = path.join(input.dir, "hover-types.mts")
  const imports = input.namespaces
    .map(([specifier, names]) => `import { ${names.join(", ")} } from ${JSON.stringify(specifier)}`)
    .join("\n")
  const all = input.namespaces.flatMap(([, names]) => names)
  fs.writeFileSync(uses, `${imports}\n${all.map((n) => `${n}\n`).join("")}export {}\n`)
  fs.writeFileSync(types, "export {}\n")
  const versions = new Map<string, number>()
  const service = serviceFor([uses, types], versions, input.options, input.dir)
  const text = fs.readFileSync(uses, "utf8")
  const docs: Record<string, string> = {}
  for (const name of all) {
    const at = text.indexOf(`\n${name}\n`) + 1
    const info = service.getQuickInfoAtPosition(uses, at)
    docs[name] = ts.displayPartsToString(info?.documentation).trim()
  }
  const accesses = typeAccesses(service.getProgram()!, uses, all)
  fs.writeFileSync(types, `${imports}\n${accesses.join("\n")}\n${input.extra ?? ""}\nexport {}\n`)
  versions.set(types, 1)
  const errors = [uses, types].flatMap((f) =>
    [...service.getSyntacticDiagnostics(f), ...service.getSemanticDiagnostics(f)].map((d) => {
      const line = d.file === undefined ? 0 : d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1
      return `${path.basename(f)}(${line}): ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
    })
  )
  service.dispose()
  return { docs, typeAccesses: accesses.length, errors }
}
