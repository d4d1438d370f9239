// A child for test/layers/ProcessOutput.test.ts: writes `count` numbered lines of `size` bytes on
// stdout through ProcessOutput.write, then says on stderr whether Node's stdout stream was made
// (and, given `streamAt`, how many writes went through that stream). ALTERNATE=1: every other
// line goes to stderr instead.
let made = false
const own = Object.getOwnPropertyDescriptor(process, "stdout")
const get = own?.get
if (get !== undefined)
  Object.defineProperty(process, "stdout", {
    configurable: true,
    enumerable: own?.enumerable === true,
    get: () => {
      made = true
      return get.call(process)
    }
  })
// Imported after the getter is watched: ProcessOutput wraps it in turn as it loads.
const ProcessOutput = await import("../../src/layers/ProcessOutput.ts")

// `streamAt`: before that line, something else writes through Node's stream (which may queue).
const [count, size, streamAt] = process.argv.slice(2).map(Number)
let throughStream = 0
for (let i = 0; i < (count ?? 0); i++) {
  const head = `${String(i).padStart(6, "0")} `
  const line = `${head}${"x".repeat(Math.max(0, (size ?? 0) - head.length - 1))}\n`
  if (i === streamAt) {
    const write = process.stdout.write.bind(process.stdout)
    process.stdout.write = ((chunk: Uint8Array | string) => {
      throughStream++
      return write(chunk)
    }) as typeof process.stdout.write
    process.stdout.write(line)
  } else ProcessOutput.write(process.env["ALTERNATE"] === "1" && i % 2 === 1 ? "stderr" : "stdout", line)
}
ProcessOutput.write("stderr", `stream:${made}${streamAt === undefined ? "" : ` through:${throughStream}`}\n`)
ProcessOutput.exitOnceFlushed(0, false)
export {}
