/**
 * `logbook migrate [--remove-legacy] [--dry-run]`: imports a workspace's legacy VT Code folders
 * (`.vtcode/history`, `.vtcode/logs`) into sessions of this invocation's store (docs/migration.md)
 * and prints what was created and what was skipped and why.
 */
import type { MigrationReport } from "@logbook/store"
import { migrateLegacy } from "@logbook/store"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { join } from "node:path"
import { CommandFailed } from "../Errors.ts"
import { jsonFlag } from "../Flags.ts"
import { formatBytes, printJson, printLines, table } from "../Output.ts"
import { location } from "../Root.ts"

const reportJson = (legacyDir: string, sessionsDir: string, r: MigrationReport) => ({
  dry_run: r.dryRun,
  legacy_dir: legacyDir,
  sessions_dir: sessionsDir,
  sessions_created: r.sessionsCreated,
  memory_imported: r.memoryImported,
  trajectory_imported: r.trajectoryImported,
  bytes_migrated: r.bytesMigrated,
  created: r.created.map((c) => ({
    source: c.source,
    session_id: c.sessionId,
    dir: c.dirName,
    kind: c.kind,
    bytes: c.bytes
  })),
  skipped: r.skipped.map((s) => ({ source: s.source, reason: s.reason })),
  legacy_bytes_freed: r.legacyBytesFreed ?? null,
  legacy_kept: r.legacyKept.map((s) => ({ source: s.source, reason: s.reason }))
})

/** `--remove-legacy` kept the legacy folders because removing them would lose `kept` (exit 1). */
const legacyKeptError = (legacyDir: string, kept: MigrationReport["legacyKept"]) =>
  new CommandFailed({
    detail: `kept ${legacyDir}/history and ${legacyDir}/logs: removing them would lose ${kept.length} ` +
      `entr${kept.length === 1 ? "y" : "ies"} not imported: ` +
      kept.map((k) => `${k.source} (${k.reason})`).join(", "),
    hint: "import or move those entries (or compare the existing sessions with them), then run " +
      "`logbook migrate --remove-legacy` again"
  })

/** `migrate`. */
export const migrateCommand = Command.make(
  "migrate",
  {
    removeLegacy: Flag.Boolean("remove-legacy").pipe(
      Flag.withDescription("After importing, remove .vtcode/history and .vtcode/logs (never .vtcode/checkpoints)"),
      Flag.withDefault(false)
    ),
    dryRun: Flag.Boolean("dry-run").pipe(
      Flag.withDescription("Print what would be imported and skipped; change nothing"),
      Flag.withDefault(false)
    ),
    json: jsonFlag
  },
  Effect.fn("cli.migrate")(function*({ dryRun, json, removeLegacy }) {
    const where = yield* location
    const legacyDir = join(where.workspace, ".vtcode")
    const report = yield* migrateLegacy(legacyDir, where.sessionsDir, { dryRun, removeLegacy })
    const refused = removeLegacy && !dryRun && report.legacyKept.length > 0
    if (json) {
      yield* printJson(reportJson(legacyDir, where.sessionsDir, report))
      if (refused) return yield* legacyKeptError(legacyDir, report.legacyKept)
      return
    }
    const verb = dryRun ? "Would import" : "Imported"
    yield* printLines(
      `${dryRun ? "Dry run (nothing changed): " : ""}${verb} ${report.sessionsCreated} session(s) from ${legacyDir} ` +
        `into ${where.sessionsDir}: ${report.memoryImported} memory envelope(s), ${report.trajectoryImported} ` +
        `trajectory log(s), ${formatBytes(report.bytesMigrated)}. Imported sessions are pinned (retention keeps them).`,
      ...(report.created.length === 0 ? [] : table(
        ["SOURCE", "SESSION", "KIND", "BYTES"],
        report.created.map((c) => [c.source, c.dirName, c.kind, String(c.bytes)]),
        [3]
      ).map((l) => `  ${l}`)),
      ...(report.skipped.length === 0 ? [] : [
        `Skipped ${report.skipped.length}:`,
        ...report.skipped.map((s) => `  ${s.source}: ${s.reason}`)
      ]),
      ...(report.legacyBytesFreed === undefined
        ? []
        : [`Removed the legacy history/ and logs/ folders (${formatBytes(report.legacyBytesFreed)}).`]),
      ...(removeLegacy && dryRun && report.legacyKept.length > 0
        ? [
          `--remove-legacy would keep the legacy folders: ${report.legacyKept.length} entr(ies) were not imported:`,
          ...report.legacyKept.map((k) => `  ${k.source}: ${k.reason}`)
        ]
        : [])
    )
    if (refused) return yield* legacyKeptError(legacyDir, report.legacyKept)
  })
).pipe(
  Command.withShortDescription("Import legacy VT Code history and trajectory files as sessions"),
  Command.withDescription(
    "Import <workspace>/.vtcode/history/*.json (memory envelopes → derived/memory.json) and " +
      "<workspace>/.vtcode/logs/*.jsonl (trajectories → derived/trajectory.jsonl) as completed, pinned sessions, " +
      "copied byte for byte with private atomic writes. Existing sessions are skipped and reported, so a re-run " +
      "is a no-op; links are never followed."
  ),
  Command.withExamples([
    { command: "logbook migrate --dry-run", description: "See what would be imported from ./.vtcode" },
    {
      command: "logbook --workspace ~/repo migrate --remove-legacy",
      description: "Import, then remove the legacy folders"
    }
  ])
)
