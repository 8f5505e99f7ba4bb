/**
 * Initialisation of a session's shared state (spec §3.3.1): private directories, the
 * append handle, the liveness lock, torn-tail repair, cap-marker handling, and either the
 * O(1) fast path over valid metadata or the authoritative rescan.
 */
import type { Manifest, PendingCapRewrite, TurnEntry } from "@logbook/domain"
import { inferTurnBase, initialLogState, isIndexConsistent, isIndexValid } from "@logbook/domain"
import { Clock, Effect, Option, Semaphore } from "effect"
import type { Scope } from "effect"
import { SessionLocked } from "../EventLogError.ts"
import { clearMarker, loadManifest, loadMarker, loadTurnIndex } from "../MetaStore.ts"
import { SessionFs } from "../SessionFs.ts"
import type { SessionPaths } from "../SessionPaths.ts"
import type { CreateDirError } from "../StoreError.ts"
import { StoreIoError } from "../StoreError.ts"
import { scanLog } from "./scan.ts"
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

/** The fast path holds only when every piece of metadata agrees with the file (spec §3.3.1 d). */
const fastPathAllowed = (
  manifest: Manifest,
  entries: ReadonlyArray<TurnEntry>,
  matching: PendingCapRewrite | undefined,
  fileLen: number
): boolean =>
  matching === undefined && manifest.in_turn !== undefined && manifest.persisted_file_len === fileLen &&
  isIndexValid(entries, fileLen) && isIndexConsistent(entries, manifest)

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
      broken: undefined
    }
    // Last release: publish metadata so the next open takes the fast path (spec §7 item 20),
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
        // Torn tail: terminate the fragment so the next record never glues onto it (spec §7 item 1).
        yield* file.write(NEWLINE)
        yield* file.datasync
        fileLen += 1
      }
    }
    state.nextOffset = fileLen

    const manifest = yield* loadManifest(paths.manifest)
    const index = yield* loadTurnIndex(paths.turns)
    const matching = markerMatches(marker, fileLen)
    if (
      Option.isSome(manifest) && Option.isSome(index) &&
      fastPathAllowed(manifest.value, index.value, matching, fileLen)
    ) {
      const m = manifest.value
      const entries = index.value
      const inTurn = m.in_turn === true
      const open = inTurn ? entries[entries.length - 1] : undefined
      state.sessionId = m.session_id
      state.createdAt = m.created_at
      state.updatedAt = m.updated_at
      state.retainedTurnBase = Math.max(m.retained_turn_base ?? 1, 1)
      state.persistedFileLen = fileLen
      state.log = { turnCount: m.turn_count, eventCount: m.event_count, status: m.status, inTurn, open }
      state.closed = inTurn ? entries.slice(0, -1) : [...entries]
      state.metaDirty = false
    } else {
      const old = Option.getOrUndefined(manifest)
      const base = inferTurnBase(old, Option.getOrUndefined(index), matching, fileLen)
      const progress = req.onScanProgress
      const scanned = yield* scanLog(
        paths.events,
        fileLen,
        initialLogState(base),
        now,
        progress === undefined ? undefined : (bytes) => progress(bytes, fileLen)
      )
      if (old !== undefined) {
        state.sessionId = old.session_id
        state.createdAt = old.created_at === "" ? (scanned.firstTimestamp ?? now) : old.created_at
        state.updatedAt = old.updated_at
      } else if (scanned.firstTimestamp !== undefined) {
        state.createdAt = scanned.firstTimestamp
      }
      state.retainedTurnBase = base
      state.log = scanned.state
      state.closed = scanned.closed
      state.metaDirty = true
      yield* persistMeta(state)
    }
    if (markerPresent) yield* clearMarker(paths.marker)
    initialised = true
    return state
  })
