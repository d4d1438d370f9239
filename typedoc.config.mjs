// `npm run docs`: the library's API reference, from the JSDoc of every entry
// point package.json `exports` names (so the reference and the public surface
// cannot drift apart), plus the modules `parley` and `parley/ai` reach through
// their generated namespaces, into docs/api/ (not committed: .gitignore).
// Built with the library's own tsconfig (src/ without the CLI). Warnings fail
// the build, so an export whose docs link to nothing or name an unlisted
// type is caught here.
import { readFileSync } from "node:fs"
import * as path from "node:path"

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8"))
const exported = Object.values(pkg.exports)
  .filter((target) => typeof target === "object")
  .map((target) => target.types.replace(/^\.\/dist\/lib\//, "src/").replace(/\.d\.ts$/, ".ts"))
// A namespace's const is typed as its module (`typeof XModule`): the module must be in the reference too.
const throughNamespaces = ["src/Namespaces.ts", "src/ai/Namespaces.ts"].flatMap((file) =>
  [...readFileSync(file, "utf8").matchAll(/^import \* as \w+ from "(\.[^"]+\.ts)"/gm)].map((m) =>
    path.posix.join(path.posix.dirname(file), m[1])
  )
)

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  name: "parley",
  entryPoints: [...new Set([...exported, ...throughNamespaces])],
  tsconfig: "tsconfig.build.json",
  out: "docs/api",
  readme: "none",
  // No git remote to link sources to; the shipped src/ and its maps serve go-to-definition instead.
  disableSources: true,
  excludeInternal: true,
  excludePrivate: true,
  // Members inherited from Effect's and the SDKs' classes (a Schema error's `make`, …) are theirs to document.
  excludeExternals: true,
  externalSymbolLinkMappings: {
    effect: { "*": "https://effect.website/docs/" },
    "@modelcontextprotocol/client": { "*": "https://modelcontextprotocol.io/docs/sdk" }
  },
  // Helper types of internal modules that public signatures mention: named here, on purpose, rather than exported.
  intentionallyNotExported: [
    "src/domain/tool/AnswerType.ts:Current",
    "src/layers/provider/Transport.ts:Converter",
    "src/layers/store/ConversationFiles.ts:Place",
    "src/layers/store/ConversationFiles.ts:File",
    "src/domain/event/Compaction.ts:JsonObject",
    "src/domain/storage/ConversationIdText.ts:ConversationId",
    "src/domain/storage/ConversationMetadata.ts:JsonObject",
    "src/domain/storage/EntryCodec.ts:JsonObject",
    "src/domain/stream/Projection.ts:ProviderEvent",
    "src/programs/coordinator/Env.ts:RecordError",
    "src/layers/mcp/Content.ts:ToolResult",
    "src/layers/mcp/McpOAuth.ts:State",
    "src/domain/tool/ToolEnv.ts:Setting",
    "src/domain/storage/NotPrivate.ts:NotPrivate",
    "src/domain/event/EventOverlay.ts:JsonObject"
  ],
  treatWarningsAsErrors: true,
  validation: { notExported: true, invalidLink: true, notDocumented: false }
}
