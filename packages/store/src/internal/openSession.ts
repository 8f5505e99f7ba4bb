/**
 * Initialisation of a session's shared state (docs/log.md#open): private directories, the
 * append handle, the liveness lock, torn-tail repair, cap-marker handling, and either the
 * O(1) fast path over valid metadata or the authoritative rescan.
 */
import type { Manifest, PendingCapRewrite, TurnEntry } from "@logbook/domain"
import { classifyLine, inferTurnBase, initialLogState, isIndexConsistent, isIndexValid } from "@logbook/domain"
import { Clock, Effect, Option, Semaphore, Stream } from "effect"
import type { Scope } from "effect"
import { SessionLocked } from "../EventLogError.ts"
import { splitLines } from "../LineSplitter.ts"
import { clearMarker, loadManifest, loadMarker, loadTurnIndex } from "../MetaStore.ts"
import { SessionFs } from "../SessionFs.ts"
import type { SessionPaths } from "../SessionPaths.ts"
import type { CreateDirError } from "../StoreError.ts"
import { StoreIoError } from "../StoreError.ts"
import { lineText, scanLog } from "./scan.ts"
import type { SessionState } from "./sessionState.ts"
import { persistMeta } from "./sessionState.ts"
import { isoFromMillis } from "./time.ts"
import { makeWriteBuffer } from "./writeBuffer.ts"

/** What the opener asks for; the first opener of a directory in this process initialises it. */
export interface OpenRequest {
  readonly paths: SessionPaths
  readonly sessionId: string
  readonly requireExclusive: boolean
  readonly onScanProgress?: ((bytes: number, total: number) => void) | undefined
}

const NEWLINE = new Uint8Array([10])

const markerMatches = (marker: Option.Option<PendingCapRewrite>, fileLen: number): PendingCapRewrite | undefined =>
  Option.isSome(marker) && marker.value.new_file_len === fileLen &&
    marker.value.new_file_len < marker.value.previous_file_len
    ? marker.value
    : undefined

/**
 * The manifest-level conditions of the fast path (docs/log.md#open); the index conditions (valid
 * for the file, consistent with the manifest) are checked when the index is first needed.
 */
const manifestAllowsFastPath = (
  manifest: Manifest,
  matching: PendingCapRewrite | undefined,
  fileLen: number
): boolean => matching === undefined && manifest.in_turn !== undefined && manifest.persisted_file_len === fileLen

/** Bytes of the run of `matrix.updated` lines at the head of the log (a rewrite's checkpoints). */
const leadingCheckpointBytes = (path: string, fileLen: number): Effect.Effect<number, StoreIoError, SessionFs> =>
  SessionFs.use((fs) =>
    fs.stream(path, { start: 0, end: fileLen }).pipe(
      splitLines(0),
      Stream.takeWhile((line) => {
        const cls = classifyLine(lineText(line.bytes))
        return cls._tag === "Counted" && cls.type === "matrix.updated"
      }),
      Stream.runFold(() => 0, (sum, line) => sum + line.bytes.length)
    )
  )

/**
 * The authoritative rebuild of a state from the log (docs/log.md#rescan): infer the retained turn
 * base, scan, keep the identity and timestamps of a manifest that parsed, publish metadata.
 */
const rescanInto = (
  state: SessionState,
  old: Manifest | undefined,
  index: ReadonlyArray<TurnEntry> | undefined,
  matching: PendingCapRewrite | undefined,
  fileLen: number,
  options: { readonly now: string; readonly onScanProgress?: ((bytes: number, total: number) => void) | undefined }
): Effect.Effect<void, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    // A rewrite whose marker was lost (docs/log.md#turn-base rule 2) put its matrix checkpoints first;
    // their length makes the inferred cut exact (docs/differences.md#turn-base). Measured only in that case.
    const rewrittenWithoutMarker = matching === undefined && old?.persisted_file_len !== undefined &&
      old.persisted_file_len > fileLen
    const checkpointRun = rewrittenWithoutMarker ? yield* leadingCheckpointBytes(state.paths.events, fileLen) : 0
    const base = inferTurnBase(old, index, matching, fileLen, checkpointRun)
    const progress = options.onScanProgress
    const scanned = yield* scanLog(
      state.paths.events,
      fileLen,
      initialLogState(base),
      options.now,
      progress === undefined ? undefined : (bytes) => progress(bytes, fileLen)
    )
    if (old !== undefined) {
      state.sessionId = old.session_id
      state.createdAt = old.created_at === "" ? (scanned.firstTimestamp ?? options.now) : old.created_at
      state.updatedAt = old.updated_at
    } else if (scanned.firstTimestamp !== undefined) {
      state.createdAt = scanned.firstTimestamp
    }
    state.retainedTurnBase = base
    state.log = scanned.state
    state.closed = scanned.closed
    state.metaDirty = true
    yield* persistMeta(state)
  })

/**
 * Finishes a fast-path open: loads the turn index and adopts it when it is valid for the file
 * and consistent with the manifest, otherwise rescans. Every operation runs this first.
 *
 * **Gotchas**: must run under the session's permit, before anything appends or publishes.
 */
export const ensureIndex = (state: SessionState): Effect.Effect<void, StoreIoError, SessionFs> =>
  Effect.suspend(() => {
    const pending = state.pendingIndex
    if (pending === undefined) return Effect.void
    return Effect.gen(function*() {
      const index = yield* loadTurnIndex(state.paths.turns)
      const m = pending.manifest
      if (Option.isSome(index) && isIndexValid(index.value, pending.fileLen) && isIndexConsistent(index.value, m)) {
        const entries = index.value
        const inTurn = m.in_turn === true
        state.log = { ...state.log, open: inTurn ? entries[entries.length - 1] : undefined }
        state.closed = inTurn ? entries.slice(0, -1) : [...entries]
      } else {
        const now = isoFromMillis(yield* Clock.currentTimeMillis)
        yield* rescanInto(state, m, Option.getOrUndefined(index), undefined, pending.fileLen, {
          now,
          onScanProgress: pending.onScanProgress
        })
      }
      state.pendingIndex = undefined
    })
  })

/** Temporary siblings of the atomic write: `.<basename>.<pid>.<nanos>.<attempt>.tmp`. */
const TEMP_NAME = /^\..+\.\d+\.\d+\.\d+\.tmp$/

/** A temporary file this old cannot belong to a write still in progress. */
const STALE_TEMP_MS = 60 * 60 * 1000

/**
 * Removes temporary files that a crash in the middle of an atomic write left in the session's
 * directories. Runs only while this process holds the session lock, and only for files older
 * than an hour, so a concurrent writer (e.g. a pin from the CLI) never loses its temp file.
 */
const removeStaleTempFiles = (paths: SessionPaths, nowMs: number): Effect.Effect<void, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    for (const dir of [paths.dir, paths.indexDir, paths.derivedDir]) {
      for (const name of yield* fs.listDir(dir)) {
        if (!TEMP_NAME.test(name)) continue
        const path = `${dir}/${name}`
        const info = yield* fs.lstat(path)
        if (Option.isSome(info) && info.value.type === "File" && nowMs - info.value.mtimeMs > STALE_TEMP_MS) {
          yield* fs.removeFile(path)
        }
      }
    }
  })

/**
 * Creates and initialises the shared state; finalizers registered in the caller's scope
 * publish metadata, close the file and release the lock when the last handle goes.
 */
export const openSessionState = (
  req: OpenRequest
): Effect.Effect<SessionState, StoreIoError | CreateDirError | SessionLocked, SessionFs | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const { paths } = req
    yield* fs.ensurePrivateDir(paths.sessionsDir)
    yield* fs.ensurePrivateDir(paths.dir)
    yield* fs.ensurePrivateDir(paths.derivedDir)
    yield* fs.ensurePrivateDir(paths.indexDir)
    const marker = yield* loadMarker(paths.marker)
    // An unparseable marker reads as none but must still be removed, or it lingers forever.
    const markerPresent = Option.isSome(marker) || Option.isSome(yield* fs.lstat(paths.marker))

    const lock = yield* fs.tryLock(paths.lock)
    if (lock._tag === "Acquired") yield* Effect.addFinalizer(() => lock.release)
    if (lock._tag === "HeldElsewhere" && req.requireExclusive) {
      return yield* new SessionLocked({ session: req.sessionId, path: paths.lock })
    }
    if (lock._tag === "Unavailable" && req.requireExclusive) {
      // Exclusivity that cannot be checked is not granted (e.g. a planted link at session.lock).
      return yield* new StoreIoError({
        operation: "open",
        path: paths.lock,
        code: "ENOLCK",
        detail: `cannot take the session lock (${lock.reason}), which requireExclusive needs`
      })
    }
    const file = yield* fs.openAppend(paths.events)
    const nowMs = yield* Clock.currentTimeMillis
    if (lock._tag === "Acquired") yield* removeStaleTempFiles(paths, nowMs)
    const now = isoFromMillis(nowMs)
    const state: SessionState = {
      paths,
      semaphore: yield* Semaphore.make(1),
      lock,
      file,
      sessionId: req.sessionId,
      createdAt: now,
      updatedAt: now,
      updatedAtMs: undefined,
      retainedTurnBase: 1,
      persistedFileLen: 0,
      log: initialLogState(1),
      closed: [],
      nextOffset: 0,
      buffer: makeWriteBuffer(),
      unsynced: false,
      metaDirty: true,
      bufferedSince: undefined,
      broken: undefined,
      pendingIndex: undefined
    }
    // Last release: publish metadata so the next open takes the fast path (docs/differences.md),
    // then close the current file (a cap rewrite may have swapped it). Only an initialised state
    // may publish: if this open fails midway, the state still holds empty counters, and writing
    // them with `persisted_file_len = file_len` would pass the next open's fast-path checks.
    let initialised = false
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => initialised ? persistMeta(state) : Effect.void).pipe(
        Effect.catch((error) => Effect.logWarning(`final flush of ${paths.events} failed: ${error.message}`)),
        Effect.provideService(SessionFs, fs),
        Effect.andThen(Effect.suspend(() => state.file === undefined ? Effect.void : state.file.close))
      )
    )

    let fileLen = yield* file.size
    if (fileLen > 0) {
      const last = yield* fs.readRange(paths.events, fileLen - 1, fileLen)
      if (last[0] !== 10) {
        // Torn tail: terminate the fragment so the next record never glues onto it (docs/differences.md#torn-tail).
        yield* file.write(NEWLINE)
        yield* file.datasync
        fileLen += 1
      }
    }
    state.nextOffset = fileLen

    const manifest = yield* loadManifest(paths.manifest)
    const matching = markerMatches(marker, fileLen)
    if (Option.isSome(manifest) && manifestAllowsFastPath(manifest.value, matching, fileLen)) {
      // Fast path: adopt the manifest now and check the turn index on first use, so opening costs
      // the same for a 1 MB and a 1 GB log (bench P3); a bad index still forces the rescan then.
      // A link or non-file planted at the index still fails the open, as an eager read would.
      const turns = yield* fs.lstat(paths.turns)
      if (Option.isSome(turns) && turns.value.type !== "File") {
        return yield* new StoreIoError({
          operation: "open",
          path: paths.turns,
          code: turns.value.type === "SymbolicLink" ? "ELOOP" : "EINVAL",
          detail: `${paths.turns} is not a regular file; the store never follows links`
        })
      }
      const m = manifest.value
      state.sessionId = m.session_id
      state.createdAt = m.created_at
      state.updatedAt = m.updated_at
      state.retainedTurnBase = Math.max(m.retained_turn_base ?? 1, 1)
      state.persistedFileLen = fileLen
      state.log = {
        turnCount: m.turn_count,
        eventCount: m.event_count,
        status: m.status,
        inTurn: m.in_turn === true,
        open: undefined
      }
      state.closed = []
      state.metaDirty = false
      state.pendingIndex = { manifest: m, fileLen, onScanProgress: req.onScanProgress }
    } else {
      const index = yield* loadTurnIndex(paths.turns)
      yield* rescanInto(state, Option.getOrUndefined(manifest), Option.getOrUndefined(index), matching, fileLen, {
        now,
        onScanProgress: req.onScanProgress
      })
    }
    if (markerPresent) yield* clearMarker(paths.marker)
    initialised = true
    return state
  })
