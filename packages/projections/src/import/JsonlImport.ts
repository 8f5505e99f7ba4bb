/**
 * The JSONL import pipeline: one source's bytes as a stream of lines in bounded memory — the first
 * lines name the format and the session, the part an earlier import consumed is only hashed and
 * checked against its digest, and what follows is mapped and appended through the store.
 */
import type { ImportFormat, ImportIdentity, MemoryDerivationAcc, ThreadEvent } from "@logbook/domain"
import {
  addToMemoryDerivation,
  derivedMemoryView,
  emptyMemoryDerivation,
  parseRfc3339,
  recogniseImportFormat
} from "@logbook/domain"
import type { ImportState, RawLine, SessionLog } from "@logbook/store"
import { EventLog, saveImportState, SessionFs, sessionPaths, splitLines, writeDerivedMemoryView } from "@logbook/store"
import { Clock, Effect, Option, Stream } from "effect"
import { createHash } from "node:crypto"
import { parseForeignLine } from "./ForeignLines.ts"
import { emptyReport, MAX_LINES_LISTED } from "./ImportReport.ts"
import type { MemoryOutcome, SkippedLine, SourceReport } from "./ImportReport.ts"
import { readSeparatedResults } from "./internal/claudeToolResultFiles.ts"
import { bump } from "./internal/counts.ts"
import { derivedExecIdentity, identityFromName, mapperOf, withPathParent } from "./internal/formatRegistry.ts"
import type { AnyMapper, MapperRun } from "./internal/formatRegistry.ts"
import { prepare } from "./internal/importAdmission.ts"
import type { Refusal } from "./internal/importAdmission.ts"
import { atSourceTime } from "./internal/sourceClock.ts"

const PEEK_LINES = 200

/**
 * A source of bytes to import: its name (a path, or `-` for stdin), its content from the start,
 * and whether it is finished (not modified for the idle window, or ended like stdin at its end):
 * a finished source gets its open turn closed and `thread.completed` (docs/import.md#finished-sources).
 */
export interface ImportInput<E> {
  readonly name: string
  readonly bytes: Stream.Stream<Uint8Array, E>
  readonly finished?: boolean | undefined
  /**
   * The source file's modification time (RFC 3339): the session's time when its records carry
   * none (`codex exec --json` output has no timestamps); absent for stdin (then the import's time).
   */
  readonly modifiedAt?: string | undefined
}

/** How an import runs. */
export interface ImportRunOptions {
  /** Map and report everything, write nothing (no session, no import state). */
  readonly dryRun?: boolean | undefined
}

/** Whether an event is a message of the conversation: a prompt (`turn.started`) or an assistant text. */
export const isMessageEvent = (event: ThreadEvent): boolean =>
  event.type === "turn.started" || (event.type === "item.completed" && event.item.type === "agent_message")

/**
 * Imports one source in a single pass over its bytes (see the module comment): the first lines
 * name the format and the session; the part consumed by an earlier import is only hashed and
 * checked against the recorded digest; what follows is mapped and appended (with `dryRun`,
 * counted and dropped).
 */
export const importInput = Effect.fn("Importer.importInput")(function*<E>(
  sessionsDir: string,
  input: ImportInput<E>,
  format: ImportFormat | "auto",
  options: ImportRunOptions = {}
) {
  const dryRun = options.dryRun === true
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
  let messages = 0
  let version: string | undefined

  const begin = Effect.gen(function*() {
    begun = true
    if (found === undefined) return (stop = { status: "ignored", reason: "not a session file of a known format" })
    mapper = mapperOf(found)
    identity ??= identityFromName(input.name, found)
    if (identity === undefined && found === "exec") {
      const first = buffered.find((line) => parseForeignLine(line.bytes, true)._tag === "Records")
      if (first !== undefined) identity = derivedExecIdentity(input.name, first.bytes)
    }
    if (identity === undefined) {
      return (stop = { status: "failed", reason: "no session id found in its first records or its name" })
    }
    identity = withPathParent(identity, found, input.name)
    const prepared = yield* prepare(sessionsDir, identity, found, mapper)
    paths = prepared.paths
    if ("refusal" in prepared) return (stop = prepared.refusal)
    previous = prepared.previous
    run = prepared.run
    if (Option.isNone(previous)) {
      if (!dryRun) memory = emptyMemoryDerivation
      return
    }
    const state = previous.value
    prevOffset = state.offset
    lines = state.lines
    prevRecords = state.records
  })

  // Two sources holding one session (the same thread id in two files) look like one source that
  // changed or shrank: a refusal says which other file the session came from. A moved source
  // (Codex archives its rollouts) imports on unchanged, so only refusals mention it.
  const otherSource = (): string =>
    Option.isSome(previous) && previous.value.source !== input.name
      ? ` (the session was imported from another source, ${previous.value.source}: two files hold it)`
      : ""
  const changed = (): Refusal => ({
    status: "refused",
    reason: "the part of the source imported before has changed since; nothing was merged — " +
      `remove the session to import the source again${otherSource()}`
  })

  const orModified = (ts: string | undefined): string | undefined =>
    ts === undefined || ts.length === 0 ? input.modifiedAt : ts

  // A new session's memory view, folded from the events as they are appended (docs/import.md#speed)
  // with the turn each belongs to as the turn index records it. Undefined when the view must be
  // derived from the log afterwards: a session imported before, a dry run, a log that held lines
  // before this import's first event, or a thread record inside an open turn (whose span only the
  // log can tell).
  let memory: MemoryDerivationAcc | undefined
  let turnsStarted = 0
  let openTurn: number | undefined
  let folded = 0
  const foldMemory = (event: ThreadEvent, offset: number): void => {
    if (memory === undefined) return
    if (folded++ === 0 && offset !== 0) {
      memory = undefined
      return
    }
    let turn: number | undefined
    if (event.type === "turn.started") {
      turnsStarted = Math.max(turnsStarted, openTurn ?? 0) + 1
      openTurn = turnsStarted
      turn = openTurn
    } else if (event.type === "turn.completed" || event.type === "turn.failed") {
      turn = openTurn
      openTurn = undefined
    } else if (event.type === "thread.started" || event.type === "thread.completed") {
      if (openTurn !== undefined) {
        memory = undefined
        return
      }
    } else {
      turn = openTurn
    }
    memory = addToMemoryDerivation(memory, event, offset, turn)
  }
  let memoryOutcome: MemoryOutcome | undefined

  // Records parsed from the lines of one chunk, mapped in order before its events are appended.
  const queued: Array<unknown> = []
  // Events mapped from the lines of one chunk, appended together (one `appendAll` per chunk).
  const pending: Array<ThreadEvent> = []
  let separatedRead = 0
  let separatedCut = 0
  let separatedMissing = 0
  const missingListed: Array<string> = []

  // Copilot CLI: a line that is not JSON is held (not consumed) until the next line shows whether
  // the two are one record broken by a raw newline inside a string (docs/import.md#github-copilot-cli).
  let held: RawLine | undefined
  let rejoined = 0

  const joined = (first: RawLine, second: RawLine): Uint8Array => {
    let end = first.bytes.length
    while (end > 0 && (first.bytes[end - 1] === 10 || first.bytes[end - 1] === 13)) end--
    return Buffer.concat([first.bytes.subarray(0, end), Buffer.from("\\n"), second.bytes])
  }

  /** Consumes a held line as the bad line it is (counted, hashed, reported by number). */
  const dropHeld = (): void => {
    if (held === undefined) return
    const line = held
    held = undefined
    lines++
    hash.update(line.bytes)
    consumed = line.offset + line.bytes.length
    skippedCount++
    if (skippedLines.length < MAX_LINES_LISTED) {
      const parsed = parseForeignLine(line.bytes, false)
      skippedLines.push({ line: lines, reason: parsed._tag === "Bad" ? parsed.reason : "not JSON" })
    }
  }

  const handle = (line: RawLine): void => {
    if (stop !== undefined || run === undefined || paths === undefined || identity === undefined) return
    const end = line.offset + line.bytes.length
    if (end <= prevOffset) {
      hash.update(line.bytes)
      consumed = end
      if (
        end === prevOffset && Option.isSome(previous) && hash.copy().digest("hex") !== previous.value.prefix_sha256
      ) {
        stop = changed()
      }
      return
    }
    if (line.offset < prevOffset) {
      stop = changed()
      return
    }
    const terminated = line.bytes[line.bytes.length - 1] === 10
    let parsed = parseForeignLine(line.bytes, comments && found === "exec")
    if (held !== undefined) {
      const both = parseForeignLine(joined(held, line), false)
      if (both._tag === "Records") {
        lines++
        hash.update(held.bytes)
        held = undefined
        rejoined++
        parsed = both
      } else if (!terminated && parsed._tag !== "Records") {
        pendingTail = end - held.offset
        return
      } else {
        dropHeld()
      }
    }
    if (found === "copilot" && terminated && parsed._tag === "Bad") {
      held = line
      return
    }
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
    for (const value of parsed.values) queued.push(value)
  }

  /** Maps one record (in source order). */
  const stepValue = (value: unknown): void => {
    if (run === undefined) return
    version ??= mapper?.version(value)
    const result = run.step(value)
    readNow++
    if (result.skipped !== undefined) bump(recordsSkipped, result.skipped)
    for (const event of result.events) pending.push(event)
  }

  // Claude Code: a tool result moved to a separate file is read back before its record is mapped.
  const stepQueued = Effect.gen(function*() {
    for (const value of queued.splice(0)) {
      const read = found === "claude" && input.name !== "-"
        ? yield* readSeparatedResults(input.name, value)
        : undefined
      if (read === undefined) {
        stepValue(value)
        continue
      }
      separatedRead += read.read
      separatedCut += read.cut
      for (const path of read.missing) {
        separatedMissing++
        if (missingListed.length < MAX_LINES_LISTED) missingListed.push(path)
      }
      stepValue(read.record)
    }
  })

  /**
   * Appends the events of the chunk just handled, opening the session's log at the first one —
   * under the source's clock: the log is created at the first source time and each batch is
   * recorded at the last source time seen, so the manifest's timestamps are the source's.
   */
  const appendPending = Effect.gen(function*() {
    yield* stepQueued
    if (pending.length === 0 || identity === undefined) return
    for (const event of pending) if (isMessageEvent(event)) messages++
    if (dryRun) {
      written += pending.splice(0).length
      return
    }
    const id = identity.sessionId
    const cursor = run?.cursor()
    log ??= yield* atSourceTime(
      orModified(cursor?.firstTs),
      EventLog.open({
        sessionsDir,
        sessionId: id,
        maxEvents: 0,
        maxBytes: 0,
        requireExclusive: true,
        barrierAtTurnBoundary: false
      })
    )
    const batch = pending.splice(0)
    yield* atSourceTime(
      orModified(cursor?.lastTs),
      log.appendAll(batch, (i, offset) => {
        const event = batch[i]
        if (event !== undefined) foldMemory(event, offset)
      })
    )
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
    dry_run: dryRun,
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
    // A held line at the end stays unconsumed while the source is live (its other half may come);
    // a finished source reports it as bad.
    if (held !== undefined) {
      if (input.finished === true && stop === undefined) dropHeld()
      else pendingTail = Math.max(pendingTail, held.bytes.length)
    }
    // A finished source (idle or ended) closes its open turn and completes the session, also when
    // no new record came since the last import: the first import after it went idle does it.
    const whole = Option.isNone(previous) || consumed >= prevOffset
    if (input.finished === true && stop === undefined && run !== undefined && whole) {
      for (const event of run.finish()) pending.push(event)
      yield* appendPending
    }
    if (log !== undefined) {
      const written = log
      yield* atSourceTime(orModified(run?.cursor()?.lastTs), written.complete)
      if (memory !== undefined && stop === undefined && paths !== undefined) {
        const acc = memory
        const target = paths
        memoryOutcome = yield* Effect.gen(function*() {
          const manifest = yield* written.manifest
          const nowMs = yield* Clock.currentTimeMillis
          const created = parseRfc3339(manifest.created_at)?.seconds ?? Math.floor(nowMs / 1000)
          const view = derivedMemoryView(acc, { sessionId: manifest.session_id, createdAt: created, nowMs })
          const r = yield* writeDerivedMemoryView(target, manifest.session_id, view)
          return r.keptHostView ? "host view kept" : r.written ? "written" : "unchanged"
        }).pipe(Effect.catch((error) => Effect.succeed<MemoryOutcome>(`not derived: ${error.message}`)))
      }
    }
  }))
  if (stop !== undefined) return { ...base(), status: stop.status, reason: stop.reason } satisfies SourceReport
  if (paths === undefined || run === undefined || found === undefined) return base()
  if (Option.isSome(previous) && consumed < prevOffset) {
    return {
      ...base(),
      status: "refused",
      reason: `the source is shorter than what was already imported (${prevOffset} bytes)${otherSource()}`
    } satisfies SourceReport
  }
  if (Option.isSome(previous) && consumed === prevOffset && written === 0) {
    return { ...base(), status: "unchanged", pending_tail_bytes: pendingTail } satisfies SourceReport
  }
  const mapped = readNow - Object.values(recordsSkipped).reduce((n, k) => n + k, 0)
  const coverage = {
    records_read: readNow,
    records_mapped: mapped,
    records_skipped: recordsSkipped,
    format_version: version,
    lines_skipped: skippedLines,
    lines_skipped_count: skippedCount,
    pending_tail_bytes: pendingTail,
    separated_results_read: separatedRead,
    separated_results_cut: separatedCut,
    separated_results_missing: missingListed,
    separated_results_missing_count: separatedMissing
  }
  if (Option.isNone(previous) && written === 0) {
    // Nothing to write (e.g. a Claude file holding only `summary` records): no empty session is made.
    return {
      ...base(),
      status: "ignored",
      reason: "nothing to import: no record of it maps to an event",
      ...coverage
    } satisfies SourceReport
  }
  const warnings = [
    ...(Option.isNone(previous) && messages === 0
      ? [`${input.name} yields no message (no prompt and no assistant text): is it a ${found} session file?`]
      : []),
    ...(rejoined > 0 ? [`${input.name}: ${rejoined} record(s) rejoined from lines broken by a raw newline`] : [])
  ]
  const status = Option.isNone(previous) ? "created" : "updated"
  const outcome = {
    ...base(),
    status,
    ...coverage,
    events_written: written,
    lines_split: split,
    lines_with_invalid_utf8: replaced,
    open_turn_usage: run.openUsage(),
    warnings,
    dry_run: dryRun,
    ...(memoryOutcome === undefined ? {} : { memory: memoryOutcome })
  } satisfies SourceReport
  if (dryRun) return outcome
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
  return outcome
})
