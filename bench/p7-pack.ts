/**
 * P7 — audit packs (README.md#performance, goal ≥ 0.8). Measured: `writeAuditPack` (walk, stream
 * and SHA-256 every file, write the pack atomically) followed by `readAuditPack` +
 * `verifyAuditPack` (every file streamed and hashed again, then the walk for unaccounted files)
 * of one session of 1 GB (100 MB with `--quick`; `--p7-bytes=N` or `LOGBOOK_P7_BYTES=N` for
 * another size). Baseline: raw read + SHA-256 of the same files, twice — once for create, once
 * for verify, the least any pack create + verify must read (`baselines/sha256.ts`). Ratio =
 * baseline time ÷ Logbook time. Both sides read from the page cache.
 */
import { readAuditPack, verifyAuditPack, writeAuditPack } from "@logbook/projections"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { sha256Baseline } from "./baselines/sha256.ts"
import type { BenchContext } from "./lib/context.ts"
import type { LogFixture } from "./lib/fixtures.ts"
import { writeLogFixture } from "./lib/fixtures.ts"
import { runStore, timedOpen } from "./lib/logbook.ts"
import type { Outcome, Sample } from "./lib/measure.ts"
import { alternate, mbps, ms, size } from "./lib/measure.ts"

/** The size asked for with `--p7-bytes=N` or `LOGBOOK_P7_BYTES`, if any. */
const sizeOverride = (): number | undefined => {
  const arg = process.argv.find((a) => a.startsWith("--p7-bytes="))
  const text = arg?.slice("--p7-bytes=".length) ?? process.env["LOGBOOK_P7_BYTES"]
  const value = text === undefined ? Number.NaN : Number(text)
  return Number.isFinite(value) && value > 0 ? value : undefined
}

/** Regular files below `dir`, recursively (the session's files, as a pack lists them). */
const filesBelow = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = Path.join(dir, entry.name)
    if (entry.isDirectory()) return filesBelow(path)
    return entry.isFile() && entry.name !== "audit-pack.json" ? [path] : []
  })

/** Runs P7 and prints its medians. */
export const runP7 = async (ctx: BenchContext): Promise<Outcome> => {
  const override = sizeOverride()
  const log: LogFixture = override === undefined
    ? ctx.bigLog()
    : writeLogFixture(Path.join(ctx.root, "p7"), "pack-session", override, 7)
  // A pack needs the manifest: the first open rescans and publishes it (P3/P5 may have already).
  if (!Fs.existsSync(log.manifestPath)) await timedOpen(log.sessionsDir, log.sessionId)
  const out = Path.join(ctx.root, "p7-pack.json")
  const files = filesBelow(log.dir)
  const bytes = files.reduce((sum, f) => sum + Fs.statSync(f).size, 0)

  const logbook = async (): Promise<Sample> => {
    const t0 = performance.now()
    const created = await runStore(writeAuditPack(log.sessionsDir, log.sessionId, { out }))
    const t1 = performance.now()
    const verified = await runStore(
      Effect.flatMap(readAuditPack(out), (pack) => verifyAuditPack(log.sessionsDir, log.sessionId, pack))
    )
    const t2 = performance.now()
    if (!verified.verified) throw new Error("the pack did not verify")
    if (created.pack.entries.length !== files.length) {
      throw new Error(`packed ${created.pack.entries.length} files, expected ${files.length}`)
    }
    return { total: t2 - t0, create: t1 - t0, verify: t2 - t1 }
  }

  const baseline = (): Promise<Sample> => {
    const t0 = performance.now()
    const read = sha256Baseline(files) + sha256Baseline(files)
    const total = performance.now() - t0
    if (read !== 2 * bytes) throw new Error(`baseline read ${read} bytes, expected ${2 * bytes}`)
    return Promise.resolve({ total })
  }

  const { logbook: l, baseline: b } = await alternate(ctx.profile, logbook, baseline)
  const ratio = b.total / l.total
  console.log(`P7 audit pack: session of ${size(bytes)} in ${files.length} files, create + verify`)
  console.log(
    `  logbook  ${ms(l.total)}  ${mbps(2 * bytes, l.total)} (create ${ms(l["create"] ?? 0)}, verify ${
      ms(l["verify"] ?? 0)
    })`
  )
  console.log(`  baseline ${ms(b.total)}  ${mbps(2 * bytes, b.total)} (read + SHA-256 of every file, twice)`)
  console.log(`  ratio ${ratio.toFixed(2)}; goal ≥ 0.8`)
  return { id: "P7", value: ratio, text: ratio.toFixed(2), goal: "≥ 0.8", met: ratio >= 0.8 }
}
