/**
 * The Node services the fast paths (`QueryFast`, `AskFast`, `AttachFast`) run on: Effect's
 * `NodeServices.layer`, with its terminal made on first use (`PersonTerminal.nodeOnFirstUse`).
 * Node's own makes `process.stdin` and `process.stdout` when the layer is built (for a pipe,
 * sockets: Node's streams and `net`), and a scripted or piped run never prompts
 * (docs/startup.md#what-a-run-no-longer-makes).
 *
 * @example
 * ```ts
 * import * as Effect from "effect/Effect"
 * import * as PlatformLayer from "./PlatformLayer.ts"
 * Effect.runFork(Effect.provide(program, PlatformLayer.layer))
 * ```
 */
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import * as Layer from "effect/Layer"
import * as PersonTerminal from "../layers/prompt/PersonTerminal.ts"

/** As `NodeServices.layer` composes them, the terminal aside. */
export const layer = Layer.provideMerge(
  NodeChildProcessSpawner.layer,
  Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeStdio.layer, PersonTerminal.nodeOnFirstUse)
)
