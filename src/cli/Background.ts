// Kept so `InterruptMenu.ts` (changed on another branch) needs no edit: the module is src/layers/prompt/Background.ts.
export * from "../layers/prompt/Background.ts"
