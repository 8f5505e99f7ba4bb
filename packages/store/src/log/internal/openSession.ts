/**
 * Initialisation of a session's shared state: private directories, the append handle, the
 * liveness lock, torn-tail repair, cap-marker handling, and either the O(1) fast path over
 * trusted metadata or the authoritative rescan. What the directory means (trusted or not, the
 * turn base, the rebuilt manifest) is decided by domain's `TurnIndex` and `LogScan`; this module
 * only does the I/O and hands the results to the state's transitions.
 */
import type { RescanInput } from "@logbook/domain"
import {
  emptyLogScan,
  formatRfc3339,
  isManifestTrusted,
  isStoredMetadataTrusted,
  isTableConsistent,
  isTableValid,
  matchingMarker,
  provisionalTurnBase,
  rebaseLogScan,
  rebuiltManifest,
  rescanTurnBase,
  turnTableOf
} from "@logbook/domain"
import { Clock, Effect, Option, Semaphore } from "effect"
import type { Scope } from "effect"
import type { SessionFsApi } from "../../fs/SessionFs.ts"
import type { CreateDirError } from "../../fs/StoreError.ts"
import { StoreIoError } from "../../fs/StoreError.ts"
import { SessionLocked } from "../EventLogError.ts"
import type { SessionPaths } from "../SessionPaths.ts"
import { loadTurnIndexSidecar } from "../TurnIndexSidecar.ts"
import { clearMarkerWith, loadManifestWith, loadMarkerWith, loadTurnIndexWith } from "./metaFiles.ts"
import { scanLog } from "./scan.ts"
import type { SessionState } from "./sessionState.ts"
import {
  fastPathAdopted,
  fileMeasured,
  indexAdopted,
  makeSessionState,
  persistMeta,
  scanAdopted
} from "./sessionState.ts"

/** What the opener asks for; the first opener of a directory in this process initialises it. */
export interface OpenRequest {
  readonly paths: SessionPaths
  readonly sessionId: string
  readonly requireExclusive: boolean
  readonly onScanProgress?: ((bytes: number, total: number) => void) | undefined
}

const NEWLINE = new Uint8Array([10])

/**
 * The authoritative rebuild of a state from the log: scan from the provisional turn base,
 * correct the base from what the scan found (a rewrite whose marker was lost), adopt the
 * rebuilt manifest, publish metadata. Every decision is domain's (`LogScan`, `TurnIndex`), the
 * same the read-only inspector makes.
 */
const rescanInto = (
  fs: SessionFsApi,
  state: SessionState,
  input: RescanInput,
  options: { readonly now: string; readonly onScanProgress?: ((bytes: number, total: number) => void) | undefined }
): Effect.Effect<void, StoreIoError> =>
  Effect.gen(function*() {
    const from = provisionalTurnBase(input)
    const progress = options.onScanProgress
    const scanned = yield* scanLog(
      fs,
      state.paths.events,
      input.fileLen,
      emptyLogScan(from),
      options.now,
      progress === undefined ? undefined : (bytes) => progress(bytes, input.fileLen)
    )
    const base = rescanTurnBase(input, scanned)
    const scan = rebaseLogScan(scanned, from, base)
    const manifest = rebuiltManifest(input.manifest, scan, {
      sessionId: state.sessionId,
      fileLen: input.fileLen,
      turnBase: base,
      now: options.now
    })
    scanAdopted(state, manifest, scan)
    yield* persistMeta(state)
  })

/**
 * Finishes a fast-path open: loads the turn index and adopts it when it is valid for the file
 * and consistent with the manifest, otherwise rescans. Every operation runs this first.
 *
 * **Gotchas**: must run under the session's permit, before anything appends or publishes.
 */
export const ensureIndex = (fs: SessionFsApi, state: SessionState): Effect.Effect<void, StoreIoError> =>
  Effect.suspend(() => {
    const pending = state.pendingIndex
    if (pending === undefined) return Effect.void
    return Effect.gen(function*() {
      const m = pending.manifest
      // A large index is read from its binary sidecar when that is the exact copy of turns.json.
      const table = yield* loadTurnIndexSidecar(fs, state.paths.turnsSidecar, state.paths.turns, pending.fileLen)
      if (table !== undefined && isTableValid(table, pending.fileLen) && isTableConsistent(table, m)) {
        return indexAdopted(state, table)
      }
      const index = Option.getOrUndefined(yield* loadTurnIndexWith(fs, state.paths.turns))
      if (index !== undefined && isStoredMetadataTrusted(m, index, undefined, pending.fileLen)) {
        indexAdopted(state, turnTableOf(index))
      } else {
        const now = formatRfc3339(yield* Clock.currentTimeMillis)
        yield* rescanInto(fs, state, { manifest: m, entries: index, marker: undefined, fileLen: pending.fileLen }, {
          now,
          onScanProgress: pending.onScanProgress
        })
      }
    })
  })

/** What a derived path must be: a directory (`index/`, `derived/`) or a regular file (metadata). */
type DerivedKind = "Directory" | "File"

/**
 * Makes way for a derived path that is not what the store keeps there (docs/format.md#permissions):
 * a symbolic link is unlinked (never its target), anything else — a regular file where a directory
 * belongs, a directory or FIFO where a file belongs — is renamed aside to `<name>.displaced-<nanos>`
 * (nothing is deleted), and a warning names it. The caller then rebuilds the path, as for a corrupt
 * derived file: everything below `index/` and `derived/`, and the manifest, derives from the log.
 * `true` when something was displaced. A link at `manifest.json` is not displaced (open refuses it).
 *
 * **Gotchas**: `derived/` may hold eviction summaries that cannot be derived again; a `derived` that
 * is not a directory holds none, and a displaced one is kept, renamed.
 */
const displaceForeign = (
  fs: SessionFsApi,
  path: string,
  kind: DerivedKind
): Effect.Effect<boolean, StoreIoError> =>
  Effect.gen(function*() {
    const info = yield* fs.lstat(path)
    if (Option.isNone(info) || info.value.type === kind) return false
    const type = info.value.type
    if (type === "SymbolicLink") {
      yield* fs.removeFile(path)
      yield* Effect.logWarning(`${path} was a symbolic link, not a ${kind}: unlinked (never followed) and rebuilt`)
    } else {
      const aside = `${path}.displaced-${yield* Clock.currentTimeNanos}`
      yield* fs.rename(path, aside)
      yield* Effect.logWarning(`${path} was a ${type}, not a ${kind}: moved to ${aside} and rebuilt`)
    }
    return true
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
const removeStaleTempFiles = (
  fs: SessionFsApi,
  paths: SessionPaths,
  nowMs: number
): Effect.Effect<void, StoreIoError> =>
  Effect.gen(function*() {
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
  fs: SessionFsApi,
  req: OpenRequest
): Effect.Effect<SessionState, StoreIoError | CreateDirError | SessionLocked, Scope.Scope> =>
  Effect.gen(function*() {
    const { paths } = req
    yield* fs.ensureSessionsRoot(paths.sessionsDir)
    yield* fs.ensurePrivateDir(paths.dir)
    // Derived paths never block the canonical log: what is not a directory there is displaced.
    yield* displaceForeign(fs, paths.derivedDir, "Directory")
    yield* displaceForeign(fs, paths.indexDir, "Directory")
    yield* fs.ensurePrivateDir(paths.derivedDir)
    yield* fs.ensurePrivateDir(paths.indexDir)
    // Held for the state's lifetime: the barrier's atomic writes never walk the path again.
    const dir = yield* fs.openDirectory(paths.dir)
    yield* Effect.addFinalizer(() => dir.close)
    const indexDir = yield* fs.openDirectory(paths.indexDir)
    yield* Effect.addFinalizer(() => indexDir.close)
    // A marker the store did not write (a link, a directory) is no marker: the rescan decides.
    yield* displaceForeign(fs, paths.marker, "File")
    const turnsInfo = yield* fs.lstat(paths.turns)
    if (Option.isSome(turnsInfo) && turnsInfo.value.type !== "SymbolicLink") {
      yield* displaceForeign(fs, paths.turns, "File")
    }
    const marker = yield* loadMarkerWith(fs, paths.marker)
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
    if (lock._tag === "Acquired") yield* removeStaleTempFiles(fs, paths, nowMs)
    const now = formatRfc3339(nowMs)
    const state = makeSessionState({
      paths,
      semaphore: yield* Semaphore.make(1),
      lock,
      file,
      dir,
      indexDir,
      sessionId: req.sessionId,
      now
    })
    // Last release: publish metadata so the next open takes the fast path (docs/differences.md),
    // then close the current file (a cap rewrite may have swapped it). Only an initialised state
    // may publish: if this open fails midway, the state still holds empty counters, and writing
    // them with `persisted_file_len = file_len` would pass the next open's fast-path checks.
    let initialised = false
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => initialised ? persistMeta(state) : Effect.void).pipe(
        Effect.catch((error) => Effect.logWarning(`final flush of ${paths.events} failed: ${error.message}`)),
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
    fileMeasured(state, fileLen)

    // A directory or FIFO at manifest.json is displaced and the manifest rebuilt by the rescan; a
    // link there still fails the open (docs/format.md#permissions: a symlinked manifest is an error).
    const manifestInfo = yield* fs.lstat(paths.manifest)
    if (Option.isSome(manifestInfo) && manifestInfo.value.type !== "SymbolicLink") {
      yield* displaceForeign(fs, paths.manifest, "File")
    }
    const manifest = Option.getOrUndefined(yield* loadManifestWith(fs, paths.manifest))
    const matching = matchingMarker(Option.getOrUndefined(marker), fileLen)
    if (manifest !== undefined && isManifestTrusted(manifest, matching, fileLen)) {
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
      fastPathAdopted(state, manifest, fileLen, req.onScanProgress)
    } else {
      const index = Option.getOrUndefined(yield* loadTurnIndexWith(fs, paths.turns))
      yield* rescanInto(fs, state, { manifest, entries: index, marker: matching, fileLen }, {
        now,
        onScanProgress: req.onScanProgress
      })
    }
    if (markerPresent) yield* clearMarkerWith(fs, paths.marker)
    initialised = true
    return state
  })
