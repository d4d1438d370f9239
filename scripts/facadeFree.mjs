import { createRequire } from "node:module"

// An esbuild plugin of the CLI build (scripts/build.mjs), in a module of its own so a test
// (test/package/FacadeFree.test.ts) can bundle with it.
//
// Node's ES module facade of a built-in reads every export when it is first imported, getters
// included: `import * as fs from "node:fs"` loads node:fs/promises (and with it readline and
// the REPL's history), the stream stack, file watchers and directory handles, about 35
// internal modules that `require("node:fs")` leaves alone (`ls` of an empty storage needs none
// of them). The CLI imports these two through an ES module of its own, made here at build
// time from the built-in's own export names: `fs` re-exports what `require` returns, its
// getter `fs.promises` as an object that reads through at each use; `fs/promises` is loaded
// at the first call of any of its functions. An export the bundle uses and the stand-in
// lacks fails the build (`import-is-undefined` is an error). Measured (farm-bench, 60 pairs,
// twice): `ls` 0.97x wall, 0.96x CPU (148 internal modules loaded, 117 now); `print` 0.99x;
// a scripted query, which loads them all anyway, 1.02x and 1.00x. (Start-up,
// docs/benchmarks.md.)
const forwarding = (target, names) =>
  `Object.defineProperties({},Object.fromEntries(${JSON.stringify(names)}.map(k=>[k,{enumerable:true,get:()=>${target}[k]}])))`
// Values on the Node that builds, deprecated getters on Node 24 (DEP0176; its own facade leaves them
// out): read at load, each would print a DeprecationWarning at every start of a CLI packed on Node 22.
const DEPRECATED = new Set(["F_OK", "R_OK", "W_OK", "X_OK"])
const FACADE_FREE = {
  fs: (mod, names) =>
    `const m=require("node:fs");export default m;export const{${names.filter((k) => !DEPRECATED.has(k)).join(",")}}=m;` +
    `export const promises=${forwarding("m.promises", Object.keys(mod.promises))};`,
  "fs/promises": (mod, names) =>
    'let m;const load=()=>m??=require("node:fs/promises");' +
    names
      .map((k) =>
        CALLBACKS.has(k)
          ? `export function ${k}(p,o){if(typeof p!=="string"||arguments.length>2||o===null||(o!==undefined&&o.recursive))return load().${k}.apply(this,arguments);` +
            `return new Promise((ok,no)=>{try{require("node:fs").${k}(p,o,(e,v)=>e?no(e):ok(v))}catch(e){no(e)}})}`
          : k in PATH_CALLBACKS
            ? `export function ${k}(...a){if(!(${PATH_CALLBACKS[k]}))return load().${k}.apply(this,a);` +
              `return new Promise((ok,no)=>{try{require("node:fs").${k}(...a,(e,v)=>e?no(e):ok(v))}catch(e){no(e)}})}`
            : typeof mod[k] === "function"
              ? `export function ${k}(...a){return load().${k}.apply(this,a)}`
              : `export const ${k}=${forwarding(`load().${k}`, Object.keys(mod[k]))};`
      )
      .join("") +
    `export default{${names.join(",")}};`
}
// Given a path and at most an options argument, these four go through node:fs's callback forms,
// which take the same options and give the same values and errors (their class, code, errno,
// syscall, path and message; the stack has no frames of the caller). A FileHandle, a Buffer or URL
// path, more arguments, or a recursive readdir (the callback form follows symlinked directories)
// go to node:fs/promises. Reading a conversation calls nothing else, so `print` never loads
// node:fs/promises and readline with it: about 1 ms of its start (0.96 ms to require it).
const CALLBACKS = new Set(["readFile", "readdir", "stat", "lstat"])
// These go through node:fs's callback forms when their arguments are ones both forms read alike
// (the condition, over the arguments `a`): paths as strings (not a FileHandle, Buffer or URL), at
// most the arguments the callback form takes before its callback, and for writeFile data as a
// string or bytes (the promise form also takes an iterable or a stream). Each gives the same value
// and the same errors. A new conversation and a lock use only these and the store's own file
// handles (layers/store/FileCalls.ts), so a scripted query loads no node:fs/promises either: ~2 ms
// of its start (readline, the REPL's history and file watchers come with it).
const path1 = 'typeof a[0]==="string"'
const PATH_CALLBACKS = {
  mkdir: `${path1}&&a.length<=2`,
  rm: `${path1}&&a.length<=2`,
  access: `${path1}&&a.length<=2`,
  unlink: `${path1}&&a.length===1`,
  rename: `${path1}&&typeof a[1]==="string"&&a.length===2`,
  link: `${path1}&&typeof a[1]==="string"&&a.length===2`,
  writeFile: `${path1}&&(typeof a[1]==="string"||ArrayBuffer.isView(a[1]))&&a.length<=3`
}
export const facadeFree = {
  name: "facade-free",
  setup(b) {
    const filter = new RegExp(`^(node:)?(${Object.keys(FACADE_FREE).join("|")})$`)
    b.onResolve({ filter }, (args) =>
      args.kind === "import-statement" ? { path: args.path.replace(/^node:/, ""), namespace: "facade-free" } : undefined
    )
    b.onLoad({ filter: /.*/, namespace: "facade-free" }, (args) => {
      const mod = createRequire(import.meta.url)(`node:${args.path}`)
      // Plain values only (reading a getter here would run it at build time); names that are identifiers.
      const names = Object.entries(Object.getOwnPropertyDescriptors(mod))
        .filter(([k, d]) => "value" in d && /^[A-Za-z_$][\w$]*$/.test(k) && k !== "default")
        .map(([k]) => k)
      return { contents: FACADE_FREE[args.path](mod, names), loader: "js" }
    })
  }
}
