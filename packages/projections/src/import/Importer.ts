/**
 * Importing the sessions other agents already wrote (docs/import.md): Codex CLI rollouts, Claude
 * Code transcripts, Gemini CLI sessions and `codex exec --json` output are read as streams of
 * lines in bounded memory (a Gemini JSON session, one object, in one piece), mapped to
 * ThreadEvents by domain's pure mappers, and written through the store's EventLog — one session
 * per source thread. Imports are idempotent and incremental: `derived/import.json` records how many bytes of
 * the source were consumed and their SHA-256, so an unchanged source writes nothing, a grown one
 * only its new records, and one whose consumed prefix changed is refused. A source not modified
 * for the idle window (10 minutes) is finished: its last turn is closed with its usage and the
 * session completed. Sessions carry the source's times (`internal/sourceClock.ts`).
 *
 * The importer is the one writer in projections (every other projection only reads): it appends
 * through the store's `EventLog`, saves `derived/import.json` and derives the memory view. This
 * module runs an import; the pieces are `internal/importSources.ts` (discovery),
 * `internal/formatRegistry.ts` (the mappers per format), `internal/importAdmission.ts` (may this
 * source be imported now), `JsonlImport.ts` (the line pipeline), `JsonSessionImport.ts` (whole-file
 * JSON: Gemini's and the legacy Codex array), `OpenCodeStore.ts` and `CursorStateDb.ts` (the agents'
 * own stores — SQLite databases and OpenCode's JSON tree — one source report per session they
 * hold) and `ImportReport.ts` (the coverage report).
 *
 * **Gotchas**: directories are walked without following links, and a link given as a path is
 * refused. A broken source never stops the others: it is reported as failed and the walk goes on.
 */
import type { ImportFormat } from "@logbook/domain"
import { formatRfc3339 } from "@logbook/domain"
import { fileSignature, SessionFs } from "@logbook/store"
import { Clock, Effect, Option } from "effect"
import * as NodePath from "node:path"
import { deriveSessionMemory } from "../memory/MemoryDerivation.ts"
import { importCursorStateDb } from "./CursorStateDb.ts"
import { emptyReport, summarise } from "./ImportReport.ts"
import type { MemoryOutcome, SourceReport } from "./ImportReport.ts"
import type { Candidate } from "./internal/importSources.ts"
import { collectSources } from "./internal/importSources.ts"
import { importInput } from "./JsonlImport.ts"
import { AIDER_HISTORY, importJsonSession } from "./JsonSessionImport.ts"
import { importOpenCodeStore } from "./OpenCodeStore.ts"

/** What to import. */
export interface ImportOptions {
  /** The sessions root to write into. */
  readonly sessionsDir: string
  /** The format of the sources, or `auto` to recognise it from each file's content. */
  readonly format: ImportFormat | "auto"
  /** Files and directories (walked recursively, links never followed). */
  readonly paths: ReadonlyArray<string>
  /** Called after each source with how many sources are done, of how many, and the last one. */
  readonly onProgress?: ((done: number, total: number, path: string) => void) | undefined
  /**
   * File signatures (size, mtime, and whether it was idle) from an earlier pass of this process,
   * updated by this one: a file whose signature did not change is reported unchanged without being
   * read (`--watch`); one that went idle since is read once more, so it is finished.
   */
  readonly signatures?: Map<string, string> | undefined
  /**
   * A source not modified for this long is finished: its last turn is closed with its usage and
   * the session completed (default {@link DEFAULT_IDLE_WINDOW_MS}; 0 finishes every source now).
   */
  readonly idleWindowMs?: number | undefined
  /** Map and report every source, write nothing (`logbook import --dry-run`). */
  readonly dryRun?: boolean | undefined
}

/** How long a source must stay unmodified to count as finished: 10 minutes (docs/import.md#finished-sources). */
export const DEFAULT_IDLE_WINDOW_MS = 10 * 60 * 1000

/**
 * Imports one source file (see the module comment). It is finished when its modification time is
 * at least `idleWindowMs` before now (the Clock's).
 */
export const importSource = (
  sessionsDir: string,
  path: string,
  format: ImportFormat | "auto",
  idleWindowMs: number = DEFAULT_IDLE_WINDOW_MS,
  dryRun = false
) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const info = yield* fs.lstat(path)
    if (Option.isNone(info) || info.value.type !== "File") return emptyReport(path, "failed", "not a regular file")
    const finished = (yield* Clock.currentTimeMillis) - info.value.mtimeMs >= idleWindowMs
    const aider = NodePath.basename(path) === AIDER_HISTORY && (format === "aider" || format === "auto")
    if (
      aider || path.endsWith(".json") &&
        (format === "gemini" || format === "codex" || format === "cline" || format === "roo" ||
          format === "opencode" || format === "auto")
    ) {
      return yield* importJsonSession(sessionsDir, path, format, info.value.size, finished, dryRun)
    }
    const modifiedAt = formatRfc3339(info.value.mtimeMs)
    return yield* importInput(sessionsDir, { name: path, bytes: fs.stream(path), finished, modifiedAt }, format, {
      dryRun
    })
  })

/**
 * Imports one candidate: an OpenCode store (a database file, a legacy `storage/` tree) gives one
 * report per session it holds, any other file one report.
 */
const importCandidate = Effect.fn("Importer.importCandidate")(function*(
  options: ImportOptions,
  candidate: Candidate
) {
  const idle = options.idleWindowMs ?? DEFAULT_IDLE_WINDOW_MS
  const dryRun = options.dryRun === true
  const opencode = options.format === "opencode" || options.format === "auto" ? options.format : undefined
  if (candidate.store === "opencode-storage") {
    return yield* importOpenCodeStore(options.sessionsDir, candidate.path, "storage", idle, dryRun)
  }
  if (opencode !== undefined && candidate.path.endsWith(".db")) {
    return yield* importOpenCodeStore(options.sessionsDir, candidate.path, "database", idle, dryRun, opencode)
  }
  const cursor = options.format === "cursor" || options.format === "auto" ? options.format : undefined
  if (cursor !== undefined && candidate.path.endsWith(".vscdb")) {
    return yield* importCursorStateDb(options.sessionsDir, candidate.path, idle, dryRun, cursor)
  }
  return [yield* importSource(options.sessionsDir, candidate.path, options.format, options.idleWindowMs, dryRun)]
})

/** Imports every source below `options.paths`; one failing source never stops the others. */
export const importSessions = Effect.fn("Importer.importSessions")(function*(options: ImportOptions) {
  const candidates = yield* collectSources(options.paths, options.format)
  const sources: Array<SourceReport> = []
  let done = 0
  const fs = yield* SessionFs
  for (const candidate of candidates) {
    // A storage tree's directory does not change when the files deep in it do: it is always read.
    const info = options.signatures === undefined || candidate.store !== undefined
      ? Option.none()
      : yield* Effect.option(fs.lstat(candidate.path))
    // A WAL database's main file may not change for a while after a commit; its `-wal` does.
    const wal =
      options.signatures === undefined || !(candidate.path.endsWith(".db") || candidate.path.endsWith(".vscdb"))
        ? Option.none()
        : yield* Effect.option(fs.lstat(`${candidate.path}-wal`))
    const walSignature = Option.isSome(wal) && Option.isSome(wal.value) ? `|${fileSignature(wal.value.value)}` : ""
    // A file that went idle since the last pass must be read once more, to be finished.
    const idle = options.idleWindowMs ?? DEFAULT_IDLE_WINDOW_MS
    const now = yield* Clock.currentTimeMillis
    const signature = Option.isSome(info) && Option.isSome(info.value)
      ? `${fileSignature(info.value.value)}${walSignature}|${now - info.value.value.mtimeMs >= idle ? "idle" : "live"}`
      : undefined
    const known = signature !== undefined && options.signatures?.get(candidate.path) === signature
    const report = candidate.problem !== undefined
      ? emptyReport(candidate.path, candidate.problem.status, candidate.problem.reason)
      : known
      ? emptyReport(candidate.path, "unchanged", "")
      : undefined
    const reports = report !== undefined ? [report] : yield* importCandidate(options, candidate).pipe(
      Effect.flatMap((imported) => Effect.forEach(imported, (one) => deriveImportedMemory(options.sessionsDir, one))),
      Effect.catch((error) => Effect.succeed([emptyReport(candidate.path, "failed", error.message)])),
      // A defect (a bug, or a stack a hostile file exhausted) fails this source only.
      Effect.catchDefect((defect) =>
        Effect.succeed([emptyReport(candidate.path, "failed", `unexpected error: ${String(defect)}`)])
      )
    )
    if (
      signature !== undefined &&
      reports.every((r) => r.status === "created" || r.status === "updated" || r.status === "unchanged")
    ) {
      options.signatures?.set(candidate.path, signature)
    }
    sources.push(...reports)
    done++
    options.onProgress?.(done, candidates.length, candidate.path)
  }
  return summarise(sources)
})

/**
 * Derives the memory view of the session a source was imported into (sessions imported from other
 * tools have no host to write one), so facts and search see them at once. A failure to derive is
 * reported on the source, never turned into a failed import. A new session from a JSONL source
 * already has its view (folded while its events were appended); only the others are read back.
 */
export const deriveImportedMemory = Effect.fn("Importer.deriveImportedMemory")(
  function*(sessionsDir: string, report: SourceReport) {
    if (
      (report.status !== "created" && report.status !== "updated") || report.session === undefined ||
      report.dry_run || report.memory !== undefined
    ) return report
    const memory = yield* deriveSessionMemory(sessionsDir, report.session).pipe(
      Effect.map((r): MemoryOutcome => r.keptHostView ? "host view kept" : r.written ? "written" : "unchanged"),
      Effect.catch((error) => Effect.succeed<MemoryOutcome>(`not derived: ${error.message}`))
    )
    return { ...report, memory }
  }
)
