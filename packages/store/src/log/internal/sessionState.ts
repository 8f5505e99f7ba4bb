/**
 * The shared in-memory state of one open session and the durability barrier that publishes it.
 * Exactly one `SessionState` exists per session directory per process; every handle points at
 * it and every operation runs under its semaphore.
 *
 * This module is the state's only owner: every field is assigned here, through the named
 * transitions below (append recorded, completion recorded, fast path adopted, index adopted,
 * scan adopted, file swapped, rewrite applied, poisoned) and the barrier. Callers decide *when*
 * a transition happens; what each one changes is written down once.
 */
import type { CapBudgets, LifecycleKind, LogScan, LogState, Manifest, TurnEntry, TurnTable } from "@logbook/domain"
import {
  applyLifecycleEvent,
  formatRfc3339,
  initialLogState,
  resumeLogState,
  SESSION_STORE_SCHEMA_VERSION,
  TurnColumns,
  withOpenEntry
} from "@logbook/domain"
import { Effect } from "effect"
import type * as Semaphore from "effect/Semaphore"
import type { AppendFile, DirectoryHandle, LockResult } from "../../fs/SessionFs.ts"
import { StoreIoError } from "../../fs/StoreError.ts"
import type { SessionPaths } from "../SessionPaths.ts"
import { writeManifestWith, writeTurnIndexWith } from "./metaFiles.ts"
import type { WriteBuffer } from "./writeBuffer.ts"
import { makeWriteBuffer } from "./writeBuffer.ts"

/**
 * Per-session state; touched only while holding `semaphore`, and assigned only by this module.
 * The fields are mutable because the append path is allocation-free; read them anywhere.
 */
export interface SessionState {
  readonly paths: SessionPaths
  readonly semaphore: Semaphore.Semaphore
  readonly lock: LockResult
  file: AppendFile | undefined
  /** The session directory, held open for the barrier's atomic writes while the state lives. */
  readonly dir: DirectoryHandle
  /** `index/`, held open likewise. */
  readonly indexDir: DirectoryHandle
  /** The raw session id recorded in the manifest. */
  sessionId: string
  createdAt: string
  updatedAt: string
  /** Epoch ms of the last append/complete, formatted lazily at the barrier. */
  updatedAtMs: number | undefined
  retainedTurnBase: number
  persistedFileLen: number
  log: LogState
  /**
   * Closed turn entries still retained, oldest first, column by column (a few dozen bytes per
   * turn, not an object each); the open entry lives in `log.open`.
   */
  closed: TurnColumns
  /** Byte length the file has once the buffer is written. */
  nextOffset: number
  readonly buffer: WriteBuffer
  /** Bytes reached the file without an fdatasync after them. */
  unsynced: boolean
  /** Something changed since the metadata was last published. */
  metaDirty: boolean
  /**
   * Epoch ms at which the oldest record not yet covered by a completed barrier was appended (for
   * autoFlush); bytes written early by the 64 KiB rule still count until the barrier syncs them.
   */
  bufferedSince: number | undefined
  /** Set when the handle can no longer guarantee file/memory agreement; every operation fails. */
  broken: string | undefined
  /** A fast-path open whose turn index is not loaded yet (see `ensureIndex`); counters come from the manifest. */
  pendingIndex: PendingIndex | undefined
}

/** What a fast-path open leaves for the first operation: the manifest it adopted and the file length then. */
export interface PendingIndex {
  readonly manifest: Manifest
  readonly fileLen: number
  readonly onScanProgress?: ((bytes: number, total: number) => void) | undefined
}

/** What the opener knows before the log is read. */
export interface SessionStateInit {
  readonly paths: SessionPaths
  readonly semaphore: Semaphore.Semaphore
  readonly lock: LockResult
  readonly file: AppendFile
  readonly dir: DirectoryHandle
  readonly indexDir: DirectoryHandle
  readonly sessionId: string
  /** ISO time of the open: the timestamps of a brand-new session. */
  readonly now: string
}

/** A state describing an empty log, numbered from turn 1, not yet published. */
export const makeSessionState = (init: SessionStateInit): SessionState => ({
  paths: init.paths,
  semaphore: init.semaphore,
  lock: init.lock,
  file: init.file,
  dir: init.dir,
  indexDir: init.indexDir,
  sessionId: init.sessionId,
  createdAt: init.now,
  updatedAt: init.now,
  updatedAtMs: undefined,
  retainedTurnBase: 1,
  persistedFileLen: 0,
  log: initialLogState(1),
  closed: new TurnColumns(),
  nextOffset: 0,
  buffer: makeWriteBuffer(),
  unsynced: false,
  metaDirty: true,
  bufferedSince: undefined,
  broken: undefined,
  pendingIndex: undefined
})

/** The log file measured (after any torn-tail repair): the next record goes at `fileLen`. */
export const fileMeasured = (s: SessionState, fileLen: number): void => {
  s.nextOffset = fileLen
}

/**
 * An append recorded in memory: `line` (without its newline, which the buffer adds) buffered, the lifecycle reducer
 * stepped, timestamps dirtied. Returns whether the record is a turn boundary (the caller then
 * runs the barrier).
 *
 * **Gotchas**: the caller must have checked `usableFile` first; nothing here can fail.
 */
export const appendRecorded = (
  s: SessionState,
  line: string,
  kind: LifecycleKind,
  nowMs: number,
  ts: string
): boolean => {
  const start = s.nextOffset
  const length = s.buffer.appendLine(line)
  s.nextOffset = start + length
  s.updatedAtMs = nowMs
  s.metaDirty = true
  if (s.bufferedSince === undefined) s.bufferedSince = nowMs
  const t = applyLifecycleEvent(s.log, kind, { start, end: s.nextOffset }, ts)
  s.log = t.state
  if (t.closed !== undefined) s.closed.push(t.closed)
  return t.boundary
}

/** `complete` ran: `updated_at` moves to `nowMs` and the metadata must be republished. */
export const completionRecorded = (s: SessionState, nowMs: number): void => {
  s.updatedAtMs = nowMs
  s.metaDirty = true
}

/**
 * The open fast path adopted a trusted manifest: identity, timestamps and counters come from it;
 * the turn index is loaded and checked on first use (see `pendingIndex`).
 */
export const fastPathAdopted = (
  s: SessionState,
  manifest: Manifest,
  fileLen: number,
  onScanProgress: PendingIndex["onScanProgress"]
): void => {
  s.sessionId = manifest.session_id
  s.createdAt = manifest.created_at
  s.updatedAt = manifest.updated_at
  s.retainedTurnBase = Math.max(manifest.retained_turn_base ?? 1, 1)
  s.persistedFileLen = fileLen
  s.log = {
    turnCount: manifest.turn_count,
    eventCount: manifest.event_count,
    status: manifest.status,
    inTurn: manifest.in_turn === true,
    open: undefined
  }
  s.closed = new TurnColumns()
  s.metaDirty = false
  s.pendingIndex = { manifest, fileLen, onScanProgress }
}

/** The pending turn index was valid and consistent with the adopted manifest: it is the index now. */
export const indexAdopted = (s: SessionState, entries: TurnTable): void => {
  const pending = s.pendingIndex
  if (pending === undefined) return
  const resumed = resumeLogState(pending.manifest, entries)
  s.log = resumed.state
  s.closed = resumed.closed
  s.pendingIndex = undefined
}

/**
 * A rescan's result adopted: the rebuilt manifest's identity and timestamps, the scan's
 * lifecycle state and closed entries. The metadata is dirty: the caller publishes it.
 */
export const scanAdopted = (s: SessionState, manifest: Manifest, scan: LogScan): void => {
  s.sessionId = manifest.session_id
  s.createdAt = manifest.created_at
  s.updatedAt = manifest.updated_at
  s.retainedTurnBase = manifest.retained_turn_base ?? 1
  s.log = scan.log
  s.closed = scan.closed
  s.metaDirty = true
  s.pendingIndex = undefined
}

/** The append handle was closed (`undefined`) or reopened during a cap rewrite. */
export const fileSwapped = (s: SessionState, file: AppendFile | undefined): void => {
  s.file = file
}

/** What a completed cap rewrite changed: the facts `rewriteApplied` moves the state by. */
export interface AppliedRewrite {
  /** Whole turns evicted from the front of the closed entries. */
  readonly turns: number
  /** Added to every retained offset: checkpoint bytes minus the cut. */
  readonly shift: number
  /** Counted lines that left the log. */
  readonly evictedLines: number
  /** Counted lines the rewrite put in front (checkpoints, kept status evidence). */
  readonly insertedLines: number
  readonly retainedTurnBase: number
  readonly newLen: number
}

/** A cap rewrite replaced the file: evicted turns dropped, retained offsets shifted exactly. */
export const rewriteApplied = (s: SessionState, r: AppliedRewrite): void => {
  const move = (e: TurnEntry): TurnEntry => ({
    ...e,
    start_offset: e.start_offset + r.shift,
    end_offset: e.end_offset + r.shift
  })
  s.closed = s.closed.slice(r.turns, r.shift)
  const open = s.log.open
  s.log = {
    ...s.log,
    eventCount: s.log.eventCount - r.evictedLines + r.insertedLines,
    open: open === undefined ? undefined : move(open)
  }
  s.retainedTurnBase = r.retainedTurnBase
  s.nextOffset = r.newLen
  s.metaDirty = true
}

/**
 * The handle can no longer guarantee that memory describes the file: every later operation
 * fails `EUNAVAILABLE` and the next open recovers from disk.
 */
export const poisoned = (s: SessionState, reason: string): void => {
  s.broken = reason
}

/** The manifest describing the current in-memory state. */
export const currentManifest = (s: SessionState): Manifest => ({
  session_id: s.sessionId,
  schema_version: SESSION_STORE_SCHEMA_VERSION,
  created_at: s.createdAt,
  updated_at: s.updatedAtMs === undefined ? s.updatedAt : formatRfc3339(s.updatedAtMs),
  turn_count: s.log.turnCount,
  event_count: s.log.eventCount,
  status: s.log.status,
  in_turn: s.log.inTurn,
  persisted_file_len: s.persistedFileLen,
  retained_turn_base: s.retainedTurnBase
})

/**
 * The turn index as persisted: closed entries plus the open one, as a view (no copy).
 *
 * **Gotchas**: the view reads the state's columns when read; it is only valid until the state's
 * next transition (an append may close the open turn, a rewrite replaces the columns).
 */
export const currentEntries = (s: SessionState): TurnTable => withOpenEntry(s.closed, s.log.open)

/** True when some budget is exceeded; O(1), so it can run after every append. */
export const overBudget = (s: SessionState, budgets: CapBudgets): boolean =>
  (budgets.maxEvents > 0 && s.log.eventCount > budgets.maxEvents) ||
  (budgets.maxBytes > 0 && s.nextOffset > budgets.maxBytes)

/** Fails when the handle was poisoned or its file handle is gone (mid cap-rewrite failure). */
export const usableFile = (s: SessionState, operation: string): Effect.Effect<AppendFile, StoreIoError> => {
  if (s.broken !== undefined) {
    return Effect.fail(
      new StoreIoError({ operation, path: s.paths.events, code: "EUNAVAILABLE", detail: s.broken })
    )
  }
  if (s.file === undefined) {
    return Effect.fail(
      new StoreIoError({
        operation,
        path: s.paths.events,
        code: "EUNAVAILABLE",
        detail: "event log file is unavailable; reopen the session"
      })
    )
  }
  return Effect.succeed(s.file)
}

/**
 * Writes buffered bytes to the file, optionally followed by `fdatasync`.
 *
 * **Gotchas**: a failed write is truncated back so the file never keeps half a buffer; if even
 * that truncation fails the handle is poisoned (offsets in memory no longer match the file) and
 * the next open rescans. A failed sync drops the buffer: its bytes are in the file already.
 * Uninterruptible: an interruption between a completed write and clearing the buffer would make
 * the next flush write the same records a second time.
 */
export const flushBytes = (s: SessionState, sync: boolean): Effect.Effect<void, StoreIoError> =>
  Effect.uninterruptible(Effect.gen(function*() {
    const file = yield* usableFile(s, "flush")
    if (s.buffer.length() > 0) {
      const before = yield* file.size
      const written = yield* Effect.result(file.write(s.buffer.bytes()))
      if (written._tag === "Failure") {
        const undo = yield* Effect.result(file.truncate(before))
        if (undo._tag === "Failure") {
          s.buffer.clear()
          poisoned(s, `a failed write could not be rolled back (${undo.failure.detail}); reopen the session`)
        }
        return yield* written.failure
      }
      s.buffer.clear()
      s.unsynced = true
    }
    if (sync && s.unsynced) {
      yield* file.datasync
      s.unsynced = false
    }
  }))

/**
 * The durability barrier: buffered bytes → fdatasync → atomic `index/turns.json` (then, for a
 * large index, its derived `index/turns.bin`) → atomic `manifest.json`.
 *
 * **Gotchas**: this order is the whole crash-safety argument. Event bytes are durable before
 * any metadata describing them; the index precedes the manifest, so a crash between the two
 * leaves a manifest whose `persisted_file_len` no longer matches and the next open rescans.
 */
export const persistMeta = (s: SessionState): Effect.Effect<void, StoreIoError> =>
  Effect.gen(function*() {
    yield* flushBytes(s, true)
    if (s.metaDirty || s.persistedFileLen !== s.nextOffset) {
      const manifest = { ...currentManifest(s), persisted_file_len: s.nextOffset }
      yield* writeTurnIndexWith(s.indexDir, s.paths, currentEntries(s), s.nextOffset)
      yield* writeManifestWith(s.dir, s.paths.manifest, manifest)
      s.persistedFileLen = s.nextOffset
      s.metaDirty = false
    }
    s.bufferedSince = undefined
  })
