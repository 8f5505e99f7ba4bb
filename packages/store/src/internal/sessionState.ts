/**
 * The shared in-memory state of one open session (docs/log.md#shared-state) and the durability barrier
 * that publishes it (docs/log.md#barrier). Exactly one `SessionState` exists per session directory
 * per process; every handle points at it and every operation runs under its semaphore.
 */
import type { LogState, Manifest, TurnEntry } from "@logbook/domain"
import { SESSION_STORE_SCHEMA_VERSION } from "@logbook/domain"
import { Effect } from "effect"
import type * as Semaphore from "effect/Semaphore"
import { writeManifest, writeTurnIndex } from "../MetaStore.ts"
import type { AppendFile, LockResult } from "../SessionFs.ts"
import { SessionFs } from "../SessionFs.ts"
import type { SessionPaths } from "../SessionPaths.ts"
import { StoreIoError } from "../StoreError.ts"
import { isoFromMillis } from "./time.ts"
import type { WriteBuffer } from "./writeBuffer.ts"

/** Mutable per-session state; touched only while holding `semaphore`. */
export interface SessionState {
  readonly paths: SessionPaths
  readonly semaphore: Semaphore.Semaphore
  readonly lock: LockResult
  file: AppendFile | undefined
  /** The raw session id recorded in the manifest. */
  sessionId: string
  createdAt: string
  updatedAt: string
  /** Epoch ms of the last append/complete, formatted lazily at the barrier. */
  updatedAtMs: number | undefined
  retainedTurnBase: number
  persistedFileLen: number
  log: LogState
  /** Closed turn entries still retained, oldest first; the open entry lives in `log.open`. */
  closed: Array<TurnEntry>
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

/** The manifest describing the current in-memory state. */
export const currentManifest = (s: SessionState): Manifest => ({
  session_id: s.sessionId,
  schema_version: SESSION_STORE_SCHEMA_VERSION,
  created_at: s.createdAt,
  updated_at: s.updatedAtMs === undefined ? s.updatedAt : isoFromMillis(s.updatedAtMs),
  turn_count: s.log.turnCount,
  event_count: s.log.eventCount,
  status: s.log.status,
  in_turn: s.log.inTurn,
  persisted_file_len: s.persistedFileLen,
  retained_turn_base: s.retainedTurnBase
})

/** The turn index as persisted: closed entries plus the open one. */
export const currentEntries = (s: SessionState): ReadonlyArray<TurnEntry> =>
  s.log.open === undefined ? s.closed : [...s.closed, s.log.open]

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
          s.broken = `a failed write could not be rolled back (${undo.failure.detail}); reopen the session`
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
 * The durability barrier: buffered bytes → fdatasync → atomic `index/turns.json` → atomic
 * `manifest.json`.
 *
 * **Gotchas**: this order is the whole crash-safety argument. Event bytes are durable before
 * any metadata describing them; the index precedes the manifest, so a crash between the two
 * leaves a manifest whose `persisted_file_len` no longer matches and the next open rescans.
 */
export const persistMeta = (s: SessionState): Effect.Effect<void, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    yield* flushBytes(s, true)
    if (s.metaDirty || s.persistedFileLen !== s.nextOffset) {
      const manifest = { ...currentManifest(s), persisted_file_len: s.nextOffset }
      yield* writeTurnIndex(s.paths.turns, currentEntries(s))
      yield* writeManifest(s.paths.manifest, manifest)
      s.persistedFileLen = s.nextOffset
      s.metaDirty = false
    }
    s.bufferedSince = undefined
  })
