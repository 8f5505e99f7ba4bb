/**
 * P9 — import of a large Codex rollout (README.md#performance, goal ≥ 0.5). The rollout is the
 * real Codex 0.40 file of the importer tests (`packages/projections/test/fixtures/realdata`),
 * its records after `session_meta` repeated until the file reaches 50 MB (10 MB with `--quick`).
 * Measured: `importSessions` of that file into an empty sessions root (read, split, parse, map,
 * append through `EventLog`, flush, save the import state). Baseline: chunked read + split +
 * `JSON.parse` of every line of the same file (`baselines/rescan.ts`). Ratio = Logbook MB/s ÷
 * baseline MB/s.
 */
import { importSessions } from "@logbook/projections"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { rescanBaseline } from "./baselines/rescan.ts"
import type { BenchContext } from "./lib/context.ts"
import { runStore } from "./lib/logbook.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, mbps, ms, size } from "./lib/measure.ts"

const SOURCE = Path.join(
  import.meta.dirname,
  "..",
  "packages",
  "projections",
  "test",
  "fixtures",
  "realdata",
  "codex-rollout",
  "agentcmd__0.40.0__rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl"
)

/** Writes the large rollout: the source's first line, then its other lines repeated up to `bytes`. */
const writeRollout = (
  dir: string,
  bytes: number
): { readonly path: string; readonly bytes: number; readonly lines: number } => {
  Fs.mkdirSync(dir, { recursive: true })
  const lines = Fs.readFileSync(SOURCE, "utf8").split("\n").filter((l) => l.length > 0)
  const [meta = "", ...body] = lines
  const block = `${body.join("\n")}\n`
  const path = Path.join(dir, "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl")
  const fd = Fs.openSync(path, "w")
  let written = Fs.writeSync(fd, `${meta}\n`)
  let count = 1
  while (written < bytes) {
    written += Fs.writeSync(fd, block)
    count += body.length
  }
  Fs.closeSync(fd)
  return { path, bytes: written, lines: count }
}

/** Runs P9 and prints its medians. */
export const runP9 = async (ctx: BenchContext): Promise<Outcome> => {
  const rollout = writeRollout(Path.join(ctx.root, "p9"), ctx.profile.quick ? 10e6 : 50e6)
  const sessionsDir = Path.join(ctx.root, "p9-sessions")

  const logbook = async (): Promise<Sample> => {
    Fs.rmSync(sessionsDir, { recursive: true, force: true })
    const t0 = performance.now()
    const report = await runStore(importSessions({ sessionsDir, format: "codex", paths: [rollout.path] }))
    const total = performance.now() - t0
    if (report.sessions_created !== 1) throw new Error(`import failed: ${JSON.stringify(report.sources)}`)
    return { total }
  }

  const baseline = (): Promise<Sample> => {
    const t0 = performance.now()
    const result = rescanBaseline(rollout.path)
    const total = performance.now() - t0
    if (result.lines !== rollout.lines) {
      throw new Error(`baseline parsed ${result.lines} lines, expected ${rollout.lines}`)
    }
    return Promise.resolve({ total })
  }

  const { logbook: l, baseline: b } = await alternate(ctx.profile, logbook, baseline)
  const ratio = b.total / l.total
  console.log(`P9 import: ${size(rollout.bytes)} Codex rollout, ${rollout.lines} records`)
  console.log(`  logbook  ${ms(l.total)}  ${mbps(rollout.bytes, l.total)}`)
  console.log(`  baseline ${ms(b.total)}  ${mbps(rollout.bytes, b.total)}`)
  console.log(`  ratio ${ratio.toFixed(2)}; goal ≥ 0.5`)
  return { id: "P9", value: ratio, text: ratio.toFixed(2), goal: "≥ 0.5", met: ratio >= 0.5 }
}
