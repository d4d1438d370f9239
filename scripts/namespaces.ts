/**
 * Generates the namespaces parley re-exports whole modules as (issue 29:
 * module docs visible on hover): `npm run namespaces` writes src/Namespaces.ts
 * and src/ai/Namespaces.ts; test/docs/Namespaces.test.ts fails when they are
 * out of date.
 *
 * Why not `export * as Events from "./Events.ts"`: TypeScript resolves that
 * alias to the source file, which has no JSDoc, so an editor's hover shows
 * nothing (nor for a JSDoc on the export, `export { Events }` of an `import
 * *`, or `export import`). A documented `const` does show, so each module
 * becomes
 *
 *     import * as EventsModule from "./domain/event/Events.ts"
 *     /** (the module's header JSDoc) *\/
 *     export const Events: typeof EventsModule = EventsModule
 *     export declare namespace Events {
 *       /** (the type's own JSDoc) *\/
 *       export type Foo<A> = EventsModule.Foo<A>
 *     }
 *
 * The const is the module's namespace object itself (values, classes,
 * schemas: `Events.make(…)`); the namespace, which holds types only and so
 * merges with it, gives `Events.Foo` as a type, generics with their
 * parameters. TypeScript's checker lists each module's exports: a new export
 * is picked up by running this again.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import ts from "typescript"

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

interface Target {
  /** The generated file, relative to the repository. */
  readonly file: string
  /** Namespace name → module (relative to `file`), under a heading comment. */
  readonly groups: ReadonlyArray<readonly [heading: string, modules: Readonly<Record<string, string>>]>
}

/** What each entry point re-exports as namespaces (src/index.ts and src/ai/index.ts re-export these files). */
export const targets: ReadonlyArray<Target> = [
  {
    file: "src/Namespaces.ts",
    groups: [
      [
        "Domain: events",
        {
          CancellationReason: "./domain/event/CancellationReason.ts",
          EventMetadata: "./domain/event/EventMetadata.ts",
          Events: "./domain/event/Events.ts",
          InquiryId: "./domain/event/InquiryId.ts",
          Timestamp: "./domain/event/Timestamp.ts"
        }
      ],
      [
        "Domain: storage",
        {
          Conversation: "./domain/storage/Conversation.ts",
          ConversationId: "./domain/storage/ConversationId.ts",
          ConversationMetadata: "./domain/storage/ConversationMetadata.ts",
          EntryCodec: "./domain/storage/EntryCodec.ts",
          EventsFile: "./domain/storage/EventsFile.ts",
          StorageBase64: "./domain/storage/StorageBase64.ts"
        }
      ],
      [
        "Domain: the stream rules",
        {
          Fork: "./domain/stream/Fork.ts",
          IncompleteTurn: "./domain/stream/IncompleteTurn.ts",
          Projection: "./domain/stream/Projection.ts",
          Sanitize: "./domain/stream/Sanitize.ts",
          Thread: "./domain/stream/Thread.ts",
          TurnAppend: "./domain/stream/TurnAppend.ts",
          TurnState: "./domain/stream/TurnState.ts",
          Turns: "./domain/stream/Turns.ts"
        }
      ],
      [
        "Domain: tools, questions, config",
        {
          AnswerFit: "./domain/tool/AnswerFit.ts",
          ConfigData: "./domain/tool/Config.ts",
          InquirySchema: "./domain/tool/InquirySchema.ts",
          Outcome: "./domain/tool/Outcome.ts",
          Redact: "./domain/tool/Redact.ts",
          Route: "./domain/tool/Route.ts"
        }
      ],
      [
        "Domain: rendering, a model's reply (also as `Provider.collect`, `Provider.ReplyBuilder`), a run's events",
        {
          Render: "./domain/render/Render.ts",
          Reply: "./domain/model/Reply.ts",
          RunEvent: "./domain/run/RunEvent.ts",
          RunReport: "./domain/run/RunReport.ts"
        }
      ],
      ["Services", { ConversationSession: "./services/ConversationSession.ts" }],
      [
        "Layers",
        {
          ConfigFile: "./layers/ConfigFile.ts",
          ExecutorLive: "./layers/executor/ExecutorLive.ts",
          ExecutorScripted: "./layers/executor/ExecutorScripted.ts",
          FileConversationStore: "./layers/store/FileConversationStore.ts",
          LlmInquiryBackend: "./layers/LlmInquiryBackend.ts",
          MemoryConversationStore: "./layers/store/MemoryConversationStore.ts",
          MockInquiryBackend: "./layers/MockInquiryBackend.ts",
          MockPromptBackend: "./layers/prompt/MockPromptBackend.ts",
          PendingAnswersLive: "./layers/PendingAnswersLive.ts",
          RunEventsLive: "./layers/RunEventsLive.ts",
          RunLive: "./layers/RunLive.ts",
          ProviderLive: "./layers/provider/ProviderLive.ts",
          ScriptedProvider: "./layers/provider/Scripted.ts",
          TerminalPromptBackend: "./layers/prompt/TerminalPromptBackend.ts"
        }
      ],
      [
        "Programs: Effect programs that only ask for services",
        {
          Query: "./programs/Query.ts",
          ToolCoordinator: "./programs/ToolCoordinator.ts",
          TurnLoop: "./programs/TurnLoop.ts",
          ContextWindow: "./programs/ContextWindow.ts",
          CompactConversation: "./programs/CompactConversation.ts"
        }
      ]
    ]
  },
  { file: "src/ai/Namespaces.ts", groups: [["Asking from an effect/ai tool handler", { Inquiry: "./Inquiry.ts" }]] }
]

const fail = (message: string): never => {
  throw new Error(`namespaces: ${message}`)
}

/** A JSDoc comment's text re-indented to `indent` (the source's own indentation dropped). */
const reindent = (comment: string, indent: string): string =>
  comment
    .split("\n")
    .map((line, i) => (i === 0 ? indent + line.trim() : `${indent} ${line.trim()}`))
    .join("\n")

/** The raw JSDoc right above a declaration (its statement's, for a variable), if any. */
const jsDocOf = (declaration: ts.Declaration): string | undefined => {
  const node = ts.isVariableDeclaration(declaration) ? declaration.parent.parent : declaration
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  return docs.at(-1)?.getText()
}

/** The type parameters as declared, names in their constraints and defaults qualified with the module. */
const typeParameters = (checker: ts.TypeChecker, symbol: ts.Symbol, qualifier: string) => {
  const declaration = symbol.declarations?.find(
    (d) => ts.isTypeAliasDeclaration(d) || ts.isInterfaceDeclaration(d) || ts.isClassDeclaration(d)
  ) as ts.TypeAliasDeclaration | ts.InterfaceDeclaration | ts.ClassDeclaration | undefined
  const parameters = declaration?.typeParameters ?? []
  if (parameters.length === 0) return { declared: "", applied: "" }
  const moduleFile = declaration!.getSourceFile()
  /** A type node's text, with each name the module declares written `qualifier.Name`. */
  const qualified = (node: ts.TypeNode): string => {
    const edits: Array<{ readonly at: number; readonly name: string }> = []
    const visit = (n: ts.Node): void => {
      if (ts.isTypeReferenceNode(n) || ts.isExpressionWithTypeArguments(n) || ts.isTypeQueryNode(n)) {
        let left: ts.Node = ts.isTypeReferenceNode(n) ? n.typeName : ts.isTypeQueryNode(n) ? n.exprName : n.expression
        while (ts.isQualifiedName(left) || ts.isPropertyAccessExpression(left))
          left = ts.isQualifiedName(left) ? left.left : left.expression
        const target = ts.isIdentifier(left) ? checker.getSymbolAtLocation(left) : undefined
        const declared = target?.declarations?.[0]
        if (declared !== undefined && !ts.isTypeParameterDeclaration(declared)) {
          if (declared.getSourceFile() !== moduleFile || target!.flags & ts.SymbolFlags.Alias)
            fail(`${symbol.name}: the type parameters name ${left.getText()}, which is not the module's own`)
          edits.push({ at: left.getStart() - node.getStart(), name: (left as ts.Identifier).text })
        }
      }
      ts.forEachChild(n, visit)
    }
    visit(node)
    let text = node.getText()
    for (const e of edits.sort((a, b) => b.at - a.at)) text = `${text.slice(0, e.at)}${qualifier}.${text.slice(e.at)}`
    return text
  }
  const declared = parameters.map(
    (p) =>
      p.name.text +
      (p.constraint === undefined ? "" : ` extends ${qualified(p.constraint)}`) +
      (p.default === undefined ? "" : ` = ${qualified(p.default)}`)
  )
  return { declared: `<${declared.join(", ")}>`, applied: `<${parameters.map((p) => p.name.text).join(", ")}>` }
}

/** The namespace's members: each type the module (or a namespace in it) exports, with its doc. */
const typeMembers = (
  checker: ts.TypeChecker,
  container: ts.Symbol,
  qualifier: string,
  indent: string,
  links: (doc: string) => string
): Array<string> =>
  checker.getExportsOfModule(container).flatMap((exported) => {
    const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
    const lines: Array<string> = []
    const typeDeclaration = symbol.declarations?.find(
      (d) => !ts.isVariableDeclaration(d) && !ts.isFunctionDeclaration(d)
    )
    const doc = [typeDeclaration, ...(symbol.declarations ?? [])].flatMap((d) => (d === undefined ? [] : [jsDocOf(d)]))
    const comment = doc.find((d) => d !== undefined)
    if (symbol.flags & ts.SymbolFlags.Type) {
      if (symbol.flags & ts.SymbolFlags.Enum) fail(`${qualifier}.${exported.name}: enums are not supported`)
      const { declared, applied } = typeParameters(checker, symbol, qualifier.split(".")[0]!)
      if (comment !== undefined) lines.push(reindent(links(comment), indent))
      lines.push(`${indent}export type ${exported.name}${declared} = ${qualifier}.${exported.name}${applied}`)
    }
    if (symbol.flags & (ts.SymbolFlags.NamespaceModule | ts.SymbolFlags.ValueModule)) {
      const inner = typeMembers(checker, symbol, `${qualifier}.${exported.name}`, `${indent}  `, links)
      if (inner.length > 0) lines.push(`${indent}export namespace ${exported.name} {`, ...inner, `${indent}}`)
    }
    return lines
  })

/** One module as a documented const and the namespace of its types. */
const namespaceOf = (checker: ts.TypeChecker, program: ts.Program, from: string, name: string, spec: string) => {
  const file = path.resolve(path.dirname(from), spec)
  const source = program.getSourceFile(file) ?? fail(`${name}: ${spec} is not a module`)
  const moduleSymbol = checker.getSymbolAtLocation(source) ?? fail(`${name}: ${spec} has no exports`)
  const header = /^\s*(\/\*\*[\s\S]*?\*\/)/.exec(source.text)?.[1] ?? fail(`${name}: ${spec} has no header JSDoc`)
  if (!/@since \d+\.\d+\.\d+/.test(header)) fail(`${name}: ${spec}'s header has no @since tag`)
  const alias = `${name}Module`
  const exportsOf = checker.getExportsOfModule(moduleSymbol)
  if (exportsOf.some((e) => e.name === alias)) fail(`${name}: ${spec} exports ${alias}, the name its import needs`)
  // `{@link make}` in the module means its own `make`: as `Name.make` it resolves on hover here.
  const exported = new Set(exportsOf.map((e) => e.name))
  const links = (doc: string) =>
    doc.replace(/\{@link(code|plain)? (\w+)/g, (m, kind: string | undefined, target: string) =>
      exported.has(target) ? `{@link${kind ?? ""} ${name}.${target}` : m
    )
  const doc = links(header)
  const members = typeMembers(checker, moduleSymbol, alias, "  ", links)
  return {
    imports: `import * as ${alias} from ${JSON.stringify(spec)}`,
    body: [
      reindent(doc, ""),
      `export const ${name}: typeof ${alias} = ${alias}`,
      ...(members.length === 0 ? [] : [`export declare namespace ${name} {`, ...members, "}"])
    ].join("\n")
  }
}

const notice = [
  "// Generated by scripts/namespaces.ts (`npm run namespaces`); do not edit.",
  "// Each module as a documented const (what an editor shows on hover) and a namespace of its types."
]

/** Formats as `biome format` would, so the committed file passes `npm run lint`. */
const format = (file: string, text: string): string => {
  const biome = path.join(repoRoot, "node_modules", "@biomejs", "biome", "bin", "biome")
  const r = spawnSync(process.execPath, [biome, "format", `--stdin-file-path=${file}`], {
    cwd: repoRoot,
    input: text,
    encoding: "utf8"
  })
  if (r.status !== 0) fail(`biome could not format ${file}: ${r.stderr}`)
  return r.stdout
}

/** Each generated file (relative to the repository) and its text. */
export const generate = (): Map<string, string> => {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(repoRoot, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => fail(ts.flattenDiagnosticMessageText(d.messageText, "\n"))
    }
  )!
  const modules = targets.flatMap((t) =>
    t.groups.flatMap(([, m]) => Object.values(m).map((spec) => path.resolve(repoRoot, path.dirname(t.file), spec)))
  )
  const program = ts.createProgram(modules, parsed.options)
  const checker = program.getTypeChecker()
  const out = new Map<string, string>()
  for (const target of targets) {
    const from = path.join(repoRoot, target.file)
    const parts = target.groups.map(
      ([heading, m]) =>
        [heading, Object.entries(m).map(([name, spec]) => namespaceOf(checker, program, from, name, spec))] as const
    )
    const text = [
      ...notice,
      ...parts.flatMap(([, ns]) => ns.map((n) => n.imports)),
      "",
      ...parts.flatMap(([heading, ns]) => [`// ${heading}`, ...ns.map((n) => `${n.body}\n`)])
    ].join("\n")
    out.set(target.file, format(target.file, text))
  }
  return out
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const [file, text] of generate()) {
    fs.writeFileSync(path.join(repoRoot, file), text)
    console.log(`namespaces: wrote ${file}`)
  }
}
