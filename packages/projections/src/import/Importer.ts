/**
 * Importing the sessions other agents already wrote (docs/import.md): Codex CLI rollouts, Claude
 * Code transcripts, Gemini CLI sessions and `codex exec --json` output are read as streams of
 * lines in bounded memory (a Gemini JSON session, one object, in one piece), mapped to
 * ThreadEvents by domain's pure mappers, and written through the store's EventLog — one session
 * per source thread. Imports are idempotent and incremental: `derived/import.json` records how many bytes of
 * the source were consumed and their SHA-256, so an unchanged source writes nothing, a grown one
 * only its new records, and one whose consumed prefix changed is refused.
 *
 * **Gotchas**: directories are walked without following links, and a link given as a path is
 * refused. A broken source never stops the others: it is reported as failed and the walk goes on.
 */
import type { ImportFormat, ImportIdentity, ImportMapper, ThreadEvent, UsageTotals } from "@logbook/domain"
import {
  claudeTranscriptMapper,
  codexExecMapper,
  codexRolloutMapper,
  geminiSessionMapper,
  recogniseImportFormat,
  zeroUsage
} from "@logbook/domain"
import type { ImportState, RawLine, SessionLog, StoreIoError } from "@logbook/store"
import {
  EventLog,
  fileSignature,
  loadImportState,
  regularFilesBelow,
  saveImportState,
  SessionFs,
  sessionPaths,
  splitLines
} from "@logbook/store"
import { Effect, Option, Predicate, Result, Schema, Stream } from "effect"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { deriveSessionMemory } from "../memory/MemoryDerivation.ts"
import { parseForeignLine } from "./ForeignLines.ts"

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
   * File signatures (size and mtime) from an earlier pass of this process, updated by this one: a
   * file whose signature did not change is reported unchanged without being read (`--watch`).
   */
  readonly signatures?: Map<string, string> | undefined
}

/** What happened to one source. */
export type SourceStatus = "created" | "updated" | "unchanged" | "failed" | "refused" | "ignored"

/** One line that was not imported, with where it is and why. */
export interface SkippedLine {
  readonly line: number
  readonly reason: string
}

/** The outcome of one source. */
export interface SourceReport {
  readonly path: string
  readonly format: ImportFormat | undefined
  readonly session: string | undefined
  readonly parent_session: string | undefined
  readonly status: SourceStatus
  readonly reason: string | undefined
  readonly events_written: number
  readonly records_read: number
  /** Records read but mapped to nothing, by reason (duplicates, settings, unknown types…). */
  readonly records_skipped: Readonly<Record<string, number>>
  /** Lines that held no record (not JSON…), at most {@link MAX_LINES_LISTED} of them listed. */
  readonly lines_skipped: ReadonlyArray<SkippedLine>
  readonly lines_skipped_count: number
  /** Lines holding two JSON objects, split and both kept. */
  readonly lines_split: number
  /** Lines with invalid UTF-8, kept with U+FFFD in place of the bad bytes. */
  readonly lines_with_invalid_utf8: number
  /** A last line without its newline that does not parse yet (a live file): left for the next import. */
  readonly pending_tail_bytes: number
  /** Usage counted for the turn still open at the end of the source (not in the log until the turn ends). */
  readonly open_turn_usage: UsageTotals
  /** What became of the session's memory view after this import (absent when nothing was written). */
  readonly memory?: MemoryOutcome
}

/**
 * The memory view of a session the import wrote to: derived from the log and written, already
 * equivalent, left alone because the host wrote its own, or not derived (with the reason; the
 * imported events are in the log either way).
 */
export type MemoryOutcome = "written" | "unchanged" | "host view kept" | `not derived: ${string}`

/** The outcome of an import. */
export interface ImportReport {
  readonly sessions_created: number
  readonly sessions_updated: number
  readonly sessions_unchanged: number
  readonly sources_failed: number
  readonly events_written: number
  readonly records_read: number
  readonly records_skipped: Readonly<Record<string, number>>
  readonly lines_skipped: number
  readonly sources: ReadonlyArray<SourceReport>
}

/** How many skipped lines one source report lists (the count is always complete). */
export const MAX_LINES_LISTED = 100

const PEEK_LINES = 200

const extensionsOf = (format: ImportFormat | "auto"): ReadonlyArray<string> =>
  format === "gemini" ? [".json", ".jsonl"] : format === "auto" ? [".jsonl", ".json"] : [".jsonl"]

interface Candidate {
  readonly path: string
  readonly problem?: { readonly status: SourceStatus; readonly reason: string }
}

/** The files below the given paths, in a stable order; links are reported, never followed. */
const collectSources = (paths: ReadonlyArray<string>, format: ImportFormat | "auto") =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const out: Array<Candidate> = []
    const exts = extensionsOf(format)
    const walk = (dir: string): Effect.Effect<void, StoreIoError> =>
      Effect.map(
        regularFilesBelow(fs, dir, (_, name, type) => type === "Directory" || exts.some((ext) => name.endsWith(ext))),
        (files) => {
          for (const file of files) out.push({ path: file.path })
        }
      )
    for (const given of paths) {
      const path = NodePath.resolve(given)
      const info = yield* Effect.result(fs.lstat(path))
      if (Result.isFailure(info)) {
        out.push({ path, problem: { status: "failed", reason: info.failure.message } })
      } else if (Option.isNone(info.success)) {
        out.push({ path, problem: { status: "failed", reason: "no such file or directory" } })
      } else if (info.success.value.type === "SymbolicLink") {
        out.push({ path, problem: { status: "refused", reason: "a symbolic link (links are never followed)" } })
      } else if (info.success.value.type === "Directory") {
        const walked = yield* Effect.result(walk(path))
        if (Result.isFailure(walked)) out.push({ path, problem: { status: "failed", reason: walked.failure.message } })
      } else {
        out.push({ path })
      }
    }
    return out
  })

/** A mapping in progress: the mapper with its state kept inside, so the importer needs no state type. */
interface MapperRun {
  readonly step: (record: unknown) => { readonly events: ReadonlyArray<ThreadEvent>; readonly skipped?: string }
  /** The state as the JSON saved in `derived/import.json`. */
  readonly snapshot: () => Schema.Json
  readonly openUsage: () => UsageTotals
}

/** A mapper of some format whose state type is hidden behind {@link MapperRun}. */
interface AnyMapper {
  readonly identify: (record: unknown) => ImportIdentity | undefined
  readonly start: (identity: ImportIdentity) => MapperRun
  readonly resume: (saved: unknown) => Result.Result<MapperRun, Schema.SchemaError>
}

const runOf = <S>(mapper: ImportMapper<S>, initial: S): MapperRun => {
  let state = initial
  return {
    step: (record) => {
      const result = mapper.step(state, record)
      state = result.state
      return result
    },
    snapshot: () => toJson(Schema.encodeUnknownSync(mapper.state)(state)),
    openUsage: () => mapper.openUsage(state)
  }
}

const anyMapper = <S>(mapper: ImportMapper<S>): AnyMapper => ({
  identify: mapper.identify,
  start: (identity) => runOf(mapper, mapper.initial(identity)),
  resume: (saved) => Result.map(Schema.decodeUnknownResult(mapper.state)(saved), (state) => runOf(mapper, state))
})

const mappers: Readonly<Record<ImportFormat, AnyMapper>> = {
  codex: anyMapper(codexRolloutMapper),
  claude: anyMapper(claudeTranscriptMapper),
  exec: anyMapper(codexExecMapper),
  gemini: anyMapper(geminiSessionMapper)
}

const mapperOf = (format: ImportFormat): AnyMapper => mappers[format]

const UUID = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/iu

/** The identity a source's name gives when its records name none (`rollout-…-<uuid>.jsonl`, `<uuid>.jsonl`). */
const identityFromName = (name: string, format: ImportFormat): ImportIdentity | undefined => {
  const uuid = UUID.exec(NodePath.basename(name))?.[1]
  if (uuid === undefined || (format !== "codex" && format !== "claude")) return undefined
  const id = `${format}-${uuid}`
  return { sessionId: id, threadId: format === "codex" ? uuid : id }
}

const bump = (counts: Record<string, number>, key: string, by = 1): void => {
  counts[key] = (counts[key] ?? 0) + by
}

/**
 * The report of a source from which nothing was imported (failed, refused, ignored or unchanged),
 * with every count zero.
 */
export const emptyReport = (
  path: string,
  status: SourceStatus,
  reason: string,
  format?: ImportFormat
): SourceReport => ({
  path,
  format,
  session: undefined,
  parent_session: undefined,
  status,
  reason,
  events_written: 0,
  records_read: 0,
  records_skipped: {},
  lines_skipped: [],
  lines_skipped_count: 0,
  lines_split: 0,
  lines_with_invalid_utf8: 0,
  pending_tail_bytes: 0,
  open_turn_usage: zeroUsage
})

/** A source of bytes to import: its name (a path, or `-` for stdin) and its content from the start. */
export interface ImportInput<E> {
  readonly name: string
  readonly bytes: Stream.Stream<Uint8Array, E>
}

type Refusal = { readonly status: SourceStatus; readonly reason: string }

/**
 * Loads a session's import state and decides whether importing into it may go on: a new session
 * must be empty; an imported one must come from the same format, its log must be as the last
 * import left it, and its saved mapper state must decode.
 */
const prepare = (sessionsDir: string, identity: ImportIdentity, format: ImportFormat, mapper: AnyMapper) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const paths = sessionPaths(sessionsDir, identity.sessionId)
    const refuse = (status: SourceStatus, reason: string) => ({ paths, refusal: { status, reason } })
    const previous = yield* loadImportState(paths)
    const logInfo = yield* fs.lstat(paths.events)
    const logLength = Option.isSome(logInfo) ? logInfo.value.size : 0
    if (Option.isNone(previous)) {
      if (logLength > 0) {
        return refuse(
          "refused",
          `session ${identity.sessionId} already exists and was not imported from a source; ` +
            "import into another --sessions-dir or remove that session first"
        )
      }
      return { paths, previous, run: mapper.start(identity) }
    }
    const state = previous.value
    if (state.format !== format) return refuse("refused", `session was imported from a ${state.format} source`)
    if (state.log_length !== logLength) {
      return refuse(
        "refused",
        `events.jsonl changed since the last import (${logLength} bytes, recorded ${state.log_length}); ` +
          "remove the session to import it again"
      )
    }
    const resumed = mapper.resume(state.mapper_state)
    if (Result.isFailure(resumed)) return refuse("failed", `unreadable import state: ${resumed.failure.message}`)
    return { paths, previous, run: resumed.success }
  })

/**
 * Imports one source in a single pass over its bytes (see the module comment): the first lines
 * name the format and the session; the part consumed by an earlier import is only hashed and
 * checked against the recorded digest; what follows is mapped and appended.
 */
export const importInput = Effect.fn("Importer.importInput")(function*<E>(
  sessionsDir: string,
  input: ImportInput<E>,
  format: ImportFormat | "auto"
) {
  const fs = yield* SessionFs
  const comments = format === "exec" || format === "auto"
  const buffered: Array<RawLine> = []
  let found: ImportFormat | undefined = format === "auto" ? undefined : format
  let identity: ImportIdentity | undefined
  let begun = false
  let stop: Refusal | undefined
  // Set once the source is known (begin):
  let mapper: AnyMapper | undefined
  let paths: ReturnType<typeof sessionPaths> | undefined
  let previous: Option.Option<ImportState> = Option.none()
  let run: MapperRun | undefined
  let prevOffset = 0
  let lines = 0
  let prevRecords = 0
  const hash = createHash("sha256")
  let log: SessionLog | undefined
  const recordsSkipped: Record<string, number> = {}
  const skippedLines: Array<SkippedLine> = []
  let skippedCount = 0
  let split = 0
  let replaced = 0
  let pendingTail = 0
  let consumed = 0
  let written = 0
  let readNow = 0

  const begin = Effect.gen(function*() {
    begun = true
    if (found === undefined) return (stop = { status: "ignored", reason: "not a session file of a known format" })
    mapper = mapperOf(found)
    identity ??= identityFromName(input.name, found)
    if (identity === undefined) {
      return (stop = { status: "failed", reason: "no session id found in its first records or its name" })
    }
    const prepared = yield* prepare(sessionsDir, identity, found, mapper)
    paths = prepared.paths
    if ("refusal" in prepared) return (stop = prepared.refusal)
    previous = prepared.previous
    run = prepared.run
    if (Option.isNone(previous)) return
    const state = previous.value
    prevOffset = state.offset
    lines = state.lines
    prevRecords = state.records
  })

  const changed: Refusal = {
    status: "refused",
    reason: "the part of the source imported before has changed since; nothing was merged — " +
      "remove the session to import the source again"
  }

  // Events mapped from the lines of one chunk, appended together (one `appendAll` per chunk).
  const pending: Array<ThreadEvent> = []

  const handle = (line: RawLine): void => {
    if (stop !== undefined || run === undefined || paths === undefined || identity === undefined) return
    const end = line.offset + line.bytes.length
    if (end <= prevOffset) {
      hash.update(line.bytes)
      consumed = end
      if (
        end === prevOffset && Option.isSome(previous) && hash.copy().digest("hex") !== previous.value.prefix_sha256
      ) {
        stop = changed
      }
      return
    }
    if (line.offset < prevOffset) {
      stop = changed
      return
    }
    const terminated = line.bytes[line.bytes.length - 1] === 10
    const parsed = parseForeignLine(line.bytes, comments && found === "exec")
    if (!terminated && parsed._tag !== "Records") {
      pendingTail = line.bytes.length
      return
    }
    lines++
    hash.update(line.bytes)
    consumed = end
    if (parsed._tag === "Bad") {
      skippedCount++
      if (skippedLines.length < MAX_LINES_LISTED) skippedLines.push({ line: lines, reason: parsed.reason })
      return
    }
    if (parsed._tag !== "Records") return
    if (parsed.split) split++
    if (parsed.replaced) replaced++
    for (const value of parsed.values) {
      const result = run.step(value)
      readNow++
      if (result.skipped !== undefined) bump(recordsSkipped, result.skipped)
      for (const event of result.events) pending.push(event)
    }
  }

  /** Appends the events of the chunk just handled, opening the session's log at the first one. */
  const appendPending = Effect.gen(function*() {
    if (pending.length === 0 || identity === undefined) return
    log ??= yield* EventLog.open({
      sessionsDir,
      sessionId: identity.sessionId,
      maxEvents: 0,
      maxBytes: 0,
      requireExclusive: true,
      barrierAtTurnBoundary: false
    })
    const batch = pending.splice(0)
    yield* log.appendAll(batch)
    written += batch.length
  })

  const peekLines = (chunk: ReadonlyArray<RawLine>) =>
    Effect.gen(function*() {
      for (const line of chunk) {
        if (begun) {
          handle(line)
          continue
        }
        buffered.push(line)
        const parsed = parseForeignLine(line.bytes, comments)
        if (parsed._tag === "Records") {
          for (const value of parsed.values) {
            found ??= recogniseImportFormat(value)
            identity ??= found === undefined ? undefined : mapperOf(found)?.identify(value)
          }
        }
        if (identity !== undefined || buffered.length >= PEEK_LINES) {
          yield* begin
          for (const held of buffered.splice(0)) handle(held)
        }
      }
      yield* appendPending
    })

  const base = (): SourceReport => ({
    ...emptyReport(input.name, "unchanged", "", found),
    session: identity?.sessionId,
    parent_session: identity?.parentSessionId,
    reason: undefined
  })

  yield* Effect.scoped(Effect.gen(function*() {
    yield* input.bytes.pipe(
      splitLines(0),
      Stream.takeWhile(() => stop === undefined),
      Stream.runForEachArray(peekLines)
    )
    if (!begun) {
      yield* begin
      for (const held of buffered.splice(0)) handle(held)
      yield* appendPending
    }
    if (log !== undefined) yield* log.flush
  }))
  if (stop !== undefined) return { ...base(), status: stop.status, reason: stop.reason } satisfies SourceReport
  if (paths === undefined || run === undefined || found === undefined) return base()
  if (Option.isSome(previous) && consumed < prevOffset) {
    return {
      ...base(),
      status: "refused",
      reason: `the source is shorter than what was already imported (${prevOffset} bytes)`
    } satisfies SourceReport
  }
  if (Option.isSome(previous) && consumed === prevOffset) {
    return { ...base(), status: "unchanged", pending_tail_bytes: pendingTail } satisfies SourceReport
  }
  if (Option.isNone(previous) && log === undefined) {
    // Nothing to write (e.g. a Claude file holding only `summary` records): no empty session is made.
    return {
      ...base(),
      status: "ignored",
      reason: "nothing to import: no record of it maps to an event",
      records_read: readNow,
      records_skipped: recordsSkipped,
      lines_skipped: skippedLines,
      lines_skipped_count: skippedCount,
      pending_tail_bytes: pendingTail
    } satisfies SourceReport
  }
  const after = yield* fs.lstat(paths.events)
  const saved: ImportState = {
    version: 1,
    format: found,
    source: input.name,
    offset: consumed,
    prefix_sha256: hash.digest("hex"),
    lines,
    records: prevRecords + readNow,
    log_length: Option.isSome(after) ? after.value.size : 0,
    mapper_state: run.snapshot()
  }
  yield* saveImportState(paths, saved)
  return {
    ...base(),
    status: Option.isNone(previous) ? "created" : "updated",
    events_written: written,
    records_read: readNow,
    records_skipped: recordsSkipped,
    lines_skipped: skippedLines,
    lines_skipped_count: skippedCount,
    lines_split: split,
    lines_with_invalid_utf8: replaced,
    pending_tail_bytes: pendingTail,
    open_turn_usage: run.openUsage()
  } satisfies SourceReport
})

/** How many events of a JSON session are appended together. */
const JSON_SESSION_BATCH = 512

/** Whole-file JSON sessions larger than this are refused (they are parsed in one piece). */
export const MAX_JSON_SESSION_BYTES = 256 * 1024 * 1024

/**
 * Imports a Gemini CLI session stored as one JSON object (`{sessionId, projectHash, …, messages}`).
 * Gemini rewrites the whole file as a session grows, so progress is counted in messages: the
 * digest covers the messages already imported (each as its JSON text), and a file whose earlier
 * messages changed is refused like a changed prefix.
 */
const importJsonSession = (sessionsDir: string, path: string, format: ImportFormat | "auto", size: number) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const notSession = format === "auto"
      ? emptyReport(path, "ignored", "not a session file of a known format")
      : emptyReport(path, "failed", "not a Gemini CLI session (expected sessionId, projectHash and messages)", "gemini")
    if (size > MAX_JSON_SESSION_BYTES) {
      return emptyReport(path, "failed", `larger than ${MAX_JSON_SESSION_BYTES} bytes, too large for a JSON session`)
    }
    const bytes = yield* fs.readFileNoFollow(path)
    if (Option.isNone(bytes)) return emptyReport(path, "failed", "no such file")
    const parsed = parseForeignLine(bytes.value, false)
    const value = parsed._tag === "Records" && parsed.values.length === 1 ? parsed.values[0] : undefined
    if (!Predicate.isReadonlyObject(value)) return notSession
    const { messages, ...header } = value
    if (!Array.isArray(messages)) return notSession
    const identity = geminiSessionMapper.identify(header)
    if (identity === undefined) return notSession
    const prepared = yield* prepare(sessionsDir, identity, "gemini", mappers.gemini)
    const base: SourceReport = {
      ...emptyReport(path, "unchanged", "", "gemini"),
      session: identity.sessionId,
      reason: undefined
    }
    const refused = (reason: string): SourceReport => ({ ...base, status: "refused", reason })
    if ("refusal" in prepared) return { ...base, status: prepared.refusal.status, reason: prepared.refusal.reason }
    const previous = prepared.previous
    const done = Option.isSome(previous) ? previous.value.offset : 0
    const hash = createHash("sha256")
    const records: Array<unknown> = Option.isNone(previous) ? [header] : []
    for (let i = 0; i < messages.length; i++) {
      if (i === done && Option.isSome(previous) && hash.copy().digest("hex") !== previous.value.prefix_sha256) {
        return refused("messages imported before have changed since; nothing was merged")
      }
      hash.update(JSON.stringify(messages[i]))
      if (i >= done) records.push(messages[i])
    }
    if (Option.isSome(previous)) {
      if (messages.length < done) {
        return refused(`fewer messages than were already imported (${done})`)
      }
      if (messages.length === done) {
        if (hash.copy().digest("hex") !== previous.value.prefix_sha256) {
          return refused("messages imported before have changed since; nothing was merged")
        }
        return base
      }
    }
    const run = prepared.run
    let written = 0
    const skipped: Record<string, number> = {}
    yield* Effect.scoped(Effect.gen(function*() {
      const log = yield* EventLog.open({
        sessionsDir,
        sessionId: identity.sessionId,
        maxEvents: 0,
        maxBytes: 0,
        requireExclusive: true,
        barrierAtTurnBoundary: false
      })
      const batch: Array<ThreadEvent> = []
      for (const record of records) {
        const step = run.step(record)
        if (step.skipped !== undefined) bump(skipped, step.skipped)
        for (const event of step.events) batch.push(event)
        if (batch.length >= JSON_SESSION_BATCH) {
          const part = batch.splice(0)
          yield* log.appendAll(part)
          written += part.length
        }
      }
      yield* log.appendAll(batch)
      written += batch.length
      yield* log.flush
    }))
    const after = yield* fs.lstat(prepared.paths.events)
    yield* saveImportState(prepared.paths, {
      version: 1,
      format: "gemini",
      source: path,
      offset: messages.length,
      prefix_sha256: hash.digest("hex"),
      lines: 0,
      records: messages.length,
      log_length: Option.isSome(after) ? after.value.size : 0,
      mapper_state: run.snapshot()
    })
    return {
      ...base,
      status: Option.isNone(previous) ? "created" : "updated",
      events_written: written,
      records_read: records.length,
      records_skipped: skipped,
      open_turn_usage: run.openUsage()
    } satisfies SourceReport
  })

/** Imports one source file (see the module comment). */
export const importSource = (sessionsDir: string, path: string, format: ImportFormat | "auto") =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const info = yield* fs.lstat(path)
    if (Option.isNone(info) || info.value.type !== "File") return emptyReport(path, "failed", "not a regular file")
    if (path.endsWith(".json") && (format === "gemini" || format === "auto")) {
      return yield* importJsonSession(sessionsDir, path, format, info.value.size)
    }
    return yield* importInput(sessionsDir, { name: path, bytes: fs.stream(path) }, format)
  })

/** The mapper states are plain JSON by construction (their Schemas are Structs of JSON values). */
const toJson = (value: unknown): Schema.Json => {
  const json = Schema.decodeUnknownResult(Schema.Json)(value)
  return Result.isSuccess(json) ? json.success : null
}

/** Imports every source below `options.paths`; one failing source never stops the others. */
export const importSessions = Effect.fn("Importer.importSessions")(function*(options: ImportOptions) {
  const candidates = yield* collectSources(options.paths, options.format)
  const sources: Array<SourceReport> = []
  let done = 0
  const fs = yield* SessionFs
  for (const candidate of candidates) {
    const info = options.signatures === undefined ? Option.none() : yield* Effect.option(fs.lstat(candidate.path))
    const signature = Option.isSome(info) && Option.isSome(info.value)
      ? fileSignature(info.value.value)
      : undefined
    const known = signature !== undefined && options.signatures?.get(candidate.path) === signature
    const report = candidate.problem !== undefined
      ? emptyReport(candidate.path, candidate.problem.status, candidate.problem.reason)
      : known
      ? emptyReport(candidate.path, "unchanged", "")
      : yield* importSource(options.sessionsDir, candidate.path, options.format).pipe(
        Effect.flatMap((imported) => deriveImportedMemory(options.sessionsDir, imported)),
        Effect.catch((error) => Effect.succeed(emptyReport(candidate.path, "failed", error.message))),
        // A defect (a bug, or a stack a hostile file exhausted) fails this source only.
        Effect.catchDefect((defect) =>
          Effect.succeed(emptyReport(candidate.path, "failed", `unexpected error: ${String(defect)}`))
        )
      )
    if (
      signature !== undefined &&
      (report.status === "created" || report.status === "updated" || report.status === "unchanged")
    ) {
      options.signatures?.set(candidate.path, signature)
    }
    sources.push(report)
    done++
    options.onProgress?.(done, candidates.length, candidate.path)
  }
  return summarise(sources)
})

/**
 * Derives the memory view of the session a source was imported into (sessions imported from other
 * tools have no host to write one), so facts and search see them at once. A failure to derive is
 * reported on the source, never turned into a failed import.
 */
export const deriveImportedMemory = Effect.fn("Importer.deriveImportedMemory")(
  function*(sessionsDir: string, report: SourceReport) {
    if ((report.status !== "created" && report.status !== "updated") || report.session === undefined) return report
    const memory = yield* deriveSessionMemory(sessionsDir, report.session).pipe(
      Effect.map((r): MemoryOutcome => r.keptHostView ? "host view kept" : r.written ? "written" : "unchanged"),
      Effect.catch((error) => Effect.succeed<MemoryOutcome>(`not derived: ${error.message}`))
    )
    return { ...report, memory }
  }
)

/** Totals over the per-source reports. */
export const summarise = (sources: ReadonlyArray<SourceReport>): ImportReport => {
  const skipped: Record<string, number> = {}
  for (const s of sources) {
    for (const [reason, n] of Object.entries(s.records_skipped)) bump(skipped, reason, n)
  }
  const count = (status: SourceStatus) => sources.filter((s) => s.status === status).length
  return {
    sessions_created: count("created"),
    sessions_updated: count("updated"),
    sessions_unchanged: count("unchanged"),
    sources_failed: count("failed") + count("refused"),
    events_written: sources.reduce((n, s) => n + s.events_written, 0),
    records_read: sources.reduce((n, s) => n + s.records_read, 0),
    records_skipped: skipped,
    lines_skipped: sources.reduce((n, s) => n + s.lines_skipped_count, 0),
    sources
  }
}
