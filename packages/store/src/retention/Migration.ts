/**
 * Migration of legacy VT Code stores (docs/migration.md): `.vtcode/history/*.json` memory
 * envelopes become sessions holding `derived/memory.json`, `.vtcode/logs/*.jsonl` trajectories
 * sessions holding `derived/trajectory.jsonl`, each with a completed manifest — with the fixes
 * the reference lacks: private atomic writes, sorted iteration, idempotence (an existing session
 * is skipped and reported, never overwritten or re-counted), imported sessions pinned so
 * retention never deletes them, links never followed, and a report of what was created and
 * skipped and why. The legacy files are copied byte for byte, never parsed. `removeLegacy` never
 * removes a legacy entry that was not imported (or proven identical to what an earlier run
 * imported): when one would be lost, the legacy folders stay and the report names what stays.
 */
import { encodeManifest, formatRfc3339, SESSION_STORE_SCHEMA_VERSION, sessionDirName } from "@logbook/domain"
import { Clock, Effect, Option } from "effect"
import * as NodePath from "node:path"

import { SessionFs } from "../fs/SessionFs.ts"
import type { SessionFsApi } from "../fs/SessionFs.ts"
import { pathsForDir } from "../log/SessionPaths.ts"
import { Retention, RETENTION_PIN_FILE } from "./Retention.ts"

/** Options of {@link migrateLegacy}. */
export interface MigrationOptions {
  /** After importing, remove the legacy `history/` and `logs/` folders (`gcLegacy`). */
  readonly removeLegacy?: boolean
  /** Report what would be created and skipped; write and remove nothing. */
  readonly dryRun?: boolean
}

/** What a legacy file becomes. */
export type LegacyKind = "memory" | "trajectory"

/** One session created (or, in a dry run, that would be created). */
export interface MigratedSession {
  /** The legacy file, relative to the legacy folder (`history/x.json`). */
  readonly source: string
  readonly sessionId: string
  /** Its directory below the sessions root. */
  readonly dirName: string
  readonly kind: LegacyKind
  readonly bytes: number
}

/** One legacy entry not imported, and why. */
export interface SkippedLegacy {
  readonly source: string
  readonly reason: string
}

/**
 * The reference's counters (`sessions_created`, `memory_imported`, `trajectory_imported`,
 * `bytes_migrated`; only what this run created) plus what was created and skipped, and the bytes
 * `removeLegacy` freed (`undefined` when it did not run).
 */
export interface MigrationReport {
  readonly dryRun: boolean
  readonly sessionsCreated: number
  readonly memoryImported: number
  readonly trajectoryImported: number
  readonly bytesMigrated: number
  readonly created: ReadonlyArray<MigratedSession>
  readonly skipped: ReadonlyArray<SkippedLegacy>
  readonly legacyBytesFreed: number | undefined
  /**
   * Entries of the legacy folders that removing them would lose: not imported by this run nor
   * proven identical to a session's copy. When `removeLegacy` was asked and this is not empty,
   * nothing was removed (`legacyBytesFreed` is `undefined`).
   */
  readonly legacyKept: ReadonlyArray<SkippedLegacy>
}

/** Prefix of the staging directory a session is assembled in before it is renamed into place. */
const STAGING_PREFIX = ".migrating-"

/** The session id of a legacy file name, or why it is not one (reference rules: last extension only). */
const legacyId = (kind: LegacyKind, name: string): string | undefined => {
  const extension = kind === "memory" ? ".json" : ".jsonl"
  if (!name.endsWith(extension)) return undefined
  const stem = name.slice(0, -extension.length)
  if (stem.length === 0) return undefined
  if (kind === "memory") return stem
  return `traj-${stem.startsWith("trajectory-") ? stem.slice("trajectory-".length) : stem}`
}

const FOLDERS: ReadonlyArray<readonly [string, LegacyKind, string]> = [
  ["history", "memory", "memory.json"],
  ["logs", "trajectory", "trajectory.jsonl"]
]

interface Plan {
  readonly source: string
  readonly path: string
  readonly sessionId: string
  readonly dirName: string
  readonly kind: LegacyKind
  readonly target: string
  readonly mtimeMs: number
}

/** Lists one legacy folder: candidate files in sorted order, and every entry skipped with its reason. */
const planFolder = (fs: SessionFsApi, legacyDir: string, folder: string, kind: LegacyKind, target: string) =>
  Effect.gen(function*() {
    const plans: Array<Plan> = []
    const skipped: Array<SkippedLegacy> = []
    // Entries that are not legacy files at all: never imported, so never removed either.
    const others: Array<SkippedLegacy> = []
    const dir = NodePath.join(legacyDir, folder)
    const info = yield* fs.lstat(dir)
    if (Option.isNone(info)) return { plans, skipped, others }
    if (info.value.type !== "Directory") {
      skipped.push({
        source: folder,
        reason: info.value.type === "SymbolicLink"
          ? "the legacy folder is a symbolic link (never followed)"
          : "not a directory"
      })
      return { plans, skipped, others }
    }
    for (const name of yield* fs.listDir(dir)) {
      const source = `${folder}/${name}`
      const sessionId = legacyId(kind, name)
      if (sessionId === undefined) {
        others.push({ source, reason: `not a legacy ${kind} file (not imported)` })
        continue
      }
      const entry = yield* fs.lstat(NodePath.join(dir, name))
      if (Option.isNone(entry)) continue
      if (entry.value.type !== "File") {
        skipped.push({
          source,
          reason: entry.value.type === "SymbolicLink" ? "a symbolic link (never followed)" : "not a regular file"
        })
        continue
      }
      plans.push({
        source,
        path: NodePath.join(dir, name),
        sessionId,
        dirName: sessionDirName(sessionId),
        kind,
        target,
        mtimeMs: entry.value.mtimeMs
      })
    }
    return { plans, skipped, others }
  })

/**
 * Whether `copy` holds exactly the bytes of `legacy` (an earlier run imported it); anything that
 * cannot be read as a regular file is not proven identical.
 */
const sameBytes = (fs: SessionFsApi, copy: string, legacy: string) =>
  Effect.gen(function*() {
    const a = yield* fs.readFileNoFollow(copy)
    const b = yield* fs.readFileNoFollow(legacy)
    return Option.isSome(a) && Option.isSome(b) && Buffer.compare(a.value, b.value) === 0
  }).pipe(Effect.catch(() => Effect.succeed(false)))

/**
 * Imports the legacy folders of `legacyDir` (a workspace's `.vtcode`) into new sessions below
 * `sessionsDir`, in sorted order (`history/` first). Each session is assembled in a staging
 * directory (`.migrating-<name>`, invisible to every listing) — `derived/memory.json` or
 * `derived/trajectory.jsonl` with the legacy bytes, a `completed` manifest with zero counters
 * and `created_at` = `updated_at` = the legacy file's mtime, and a retention pin naming the
 * source — and then renamed into place, so a session exists whole or not at all. A session
 * directory that already exists is skipped and reported (never overwritten or counted again),
 * so re-running is a no-op. Links in or in place of the legacy folders are never followed.
 * `removeLegacy` then removes `history/` and `logs/` (never `checkpoints/`) — only when every
 * entry in them was imported, or is a file a session already holds byte for byte; otherwise
 * nothing is removed and `legacyKept` names what would have been lost.
 *
 * **Gotchas**: imported sessions are pinned, so retention keeps them until `unpin`; the rename
 * into place is not followed by a directory fsync — after a crash a re-run imports what is missing.
 */
export const migrateLegacy = Effect.fn("Migration.migrateLegacy")(
  function*(legacyDir: string, sessionsDir: string, options: MigrationOptions = {}) {
    const fs = yield* SessionFs
    const dryRun = options.dryRun === true
    const root = NodePath.resolve(sessionsDir)
    const created: Array<MigratedSession> = []
    const skipped: Array<SkippedLegacy> = []
    const kept: Array<SkippedLegacy> = []
    const taken = new Set<string>()
    if (!dryRun) yield* fs.ensureSessionsRoot(root)
    const nowMs = yield* Clock.currentTimeMillis
    for (const [folder, kind, target] of FOLDERS) {
      const listed = yield* planFolder(fs, NodePath.resolve(legacyDir), folder, kind, target)
      for (const entry of listed.skipped) {
        skipped.push(entry)
        kept.push(entry)
      }
      for (const entry of listed.others) kept.push(entry)
      for (const plan of listed.plans) {
        const paths = pathsForDir(root, plan.dirName)
        const exists = taken.has(plan.dirName) || Option.isSome(yield* fs.lstat(paths.dir))
        if (exists) {
          const identical = yield* sameBytes(fs, NodePath.join(paths.dir, "derived", plan.target), plan.path)
          const reason = identical
            ? `session directory ${plan.dirName} already exists and holds the same bytes (imported before)`
            : `session directory ${plan.dirName} already exists (left as it is)`
          skipped.push({ source: plan.source, reason })
          if (!identical) kept.push({ source: plan.source, reason: `not imported: ${reason}` })
          continue
        }
        const bytes = yield* fs.readFileNoFollow(plan.path)
        if (Option.isNone(bytes)) {
          skipped.push({ source: plan.source, reason: "vanished while migrating" })
          continue
        }
        taken.add(plan.dirName)
        if (!dryRun) {
          const staging = NodePath.join(root, `${STAGING_PREFIX}${plan.dirName}`)
          yield* fs.removeTree(staging)
          const derived = NodePath.join(staging, "derived")
          yield* fs.ensurePrivateDir(staging)
          yield* fs.ensurePrivateDir(derived)
          yield* fs.writeAtomic(NodePath.join(derived, plan.target), bytes.value)
          const stamp = formatRfc3339(plan.mtimeMs > 0 ? plan.mtimeMs : nowMs)
          yield* fs.writeAtomic(
            NodePath.join(staging, "manifest.json"),
            encodeManifest({
              session_id: plan.sessionId,
              schema_version: SESSION_STORE_SCHEMA_VERSION,
              created_at: stamp,
              updated_at: stamp,
              turn_count: 0,
              event_count: 0,
              status: "completed",
              in_turn: false,
              persisted_file_len: 0,
              retained_turn_base: 1
            })
          )
          yield* fs.writeAtomic(
            NodePath.join(staging, RETENTION_PIN_FILE),
            JSON.stringify({ reason: `imported from .vtcode/${plan.source}`, pinned_at: formatRfc3339(nowMs) })
          )
          yield* fs.rename(staging, paths.dir)
        }
        created.push({
          source: plan.source,
          sessionId: plan.sessionId,
          dirName: plan.dirName,
          kind: plan.kind,
          bytes: bytes.value.length
        })
      }
    }
    let legacyBytesFreed: number | undefined = undefined
    if (options.removeLegacy === true && !dryRun && kept.length === 0) {
      const retention = yield* Retention
      legacyBytesFreed = yield* retention.gcLegacy(NodePath.join(NodePath.resolve(legacyDir), "sessions"))
    }
    return {
      dryRun,
      sessionsCreated: created.length,
      memoryImported: created.filter((c) => c.kind === "memory").length,
      trajectoryImported: created.filter((c) => c.kind === "trajectory").length,
      bytesMigrated: created.reduce((sum, c) => sum + c.bytes, 0),
      created,
      skipped,
      legacyBytesFreed,
      legacyKept: kept
    } satisfies MigrationReport
  }
)
