/**
 * A tiny benchmark harness: runs each case several times after warm-up and
 * reports medians, so goals are ratios measured in the same run (never
 * absolute times, which depend on the machine).
 */
export interface Result {
  readonly name: string
  readonly medianMs: number
}

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** Times `f` (sync or async) `runs` times after `warmup` runs. */
export const measure = async (
  name: string,
  f: () => unknown,
  options: { runs?: number; warmup?: number } = {}
): Promise<Result> => {
  const runs = options.runs ?? 15
  const warmup = options.warmup ?? 3
  for (let i = 0; i < warmup; i++) await f()
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await f()
    times.push(performance.now() - t0)
  }
  return { name, medianMs: median(times) }
}

export interface Goal {
  readonly name: string
  readonly subject: Result
  readonly floor: Result
  readonly maxRatio: number
  readonly note?: string
  /** What the medians measure (default "ms"). */
  readonly unit?: string
}

/** A count that must be 0, as a goal (the harness compares ratios: count / 1 ≤ 0). */
export const none = (name: string, n: number, note?: string): Goal => ({
  name,
  subject: { name: "found", medianMs: n },
  floor: { name: "one", medianMs: 1 },
  maxRatio: 0,
  unit: "",
  ...(note !== undefined ? { note } : {})
})

/** Whether a goal is met: its ratio within its bound. */
export const passes = (g: Goal): boolean => g.subject.medianMs / g.floor.medianMs <= g.maxRatio

export const report = (goals: ReadonlyArray<Goal>): boolean => {
  let ok = true
  for (const g of goals) {
    const ratio = g.subject.medianMs / g.floor.medianMs
    const pass = passes(g)
    const unit = g.unit ?? "ms"
    ok &&= pass
    console.log(
      `${pass ? "PASS" : "FAIL"}  ${g.name}\n      ${g.subject.name}: ${g.subject.medianMs.toFixed(2)} ${unit}   floor (${g.floor.name}): ${g.floor.medianMs.toFixed(2)} ${unit}   ratio ${ratio.toFixed(2)} (goal ≤ ${g.maxRatio})${g.note ? `\n      ${g.note}` : ""}`
    )
  }
  return ok
}

/** One goal's line in a run's Markdown table. */
const cell = (s: string): string => s.replaceAll("|", "\\|").replaceAll("\n", " ")
const figure = (r: Result, unit: string): string =>
  `${r.medianMs >= 100 ? r.medianMs.toFixed(0) : r.medianMs.toFixed(2)}${unit === "" ? "" : ` ${unit}`}`

/** One suite's goals in a run, or why it has none (it overran its bound, it crashed). */
export interface SuiteGoals {
  readonly suite: string
  readonly goals: ReadonlyArray<Goal>
  readonly failure?: string
}

/**
 * The goals of one run as a Markdown table, under a line saying when, on
 * what and at which commit it ran (docs/benchmarks.md quotes one such run:
 * every figure in it comes from the same command on the same machine).
 */
export const table = (heading: string, suites: ReadonlyArray<SuiteGoals>): string => {
  const rows = suites.flatMap(({ suite, goals, failure }) => [
    ...goals.map((g) => {
      const unit = g.unit ?? "ms"
      const ratio = g.subject.medianMs / g.floor.medianMs
      const verdict = passes(g) ? "pass" : "**missed**"
      const measured = `${cell(g.subject.name)}: ${figure(g.subject, unit)} vs ${cell(g.floor.name)}: ${figure(g.floor, unit)}${g.note ? ` (${cell(g.note)})` : ""}`
      return `| ${suite} | ${cell(g.name)} | ${measured} | ${ratio.toFixed(2)}× (≤ ${g.maxRatio}): ${verdict} |`
    }),
    ...(failure !== undefined ? [`| ${suite} | the suite's goals | the suite ${cell(failure)} | **missed** |`] : [])
  ])
  return [heading, "", "| suite | goal | measured | ratio (goal) |", "|---|---|---|---|", ...rows, ""].join("\n")
}
