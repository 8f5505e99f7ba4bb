/**
 * Retention of session stores (docs/log.md#retention, with the fixes of docs/differences.md#retention): the abandoned-session sweep, the
 * count and age limits, pins, close-path eviction of empty stores and removal of the legacy
 * folders. Which sessions go is decided by the pure planner in `@logbook/domain`
 * (`planRetention`); this service finds the candidates and performs the removals.
 *
 * Safety rules, all enforced here: sessions are found only by listing the direct children of
 * the sessions root (never from manifest contents); symlinks, dot-names, the preserved session,
 * pinned sessions, live sessions (`session.lock` held), unreadable or invalid manifests and
 * `active` sessions are never candidates; a chosen session is inspected again immediately before
 * removal; and removal goes through the trash primitive, which deletes only a real directory that
 * is a direct child of the root and never follows a link.
 *
 * Session ids given to these methods are resolved with `sessionDirName`, which is the identity on
 * every valid directory name, so both a raw session id and a directory name from a listing work.
 * Ids in results are directory names.
 */
import type { Manifest, RetentionCandidate, RetentionPhase, RetentionPolicy } from "@logbook/domain"
import {
  ageCutoffSeconds,
  completeAbandonedManifest,
  DEFAULT_RETENTION_POLICY,
  formatRfc3339,
  planRetention,
  sessionDirName
} from "@logbook/domain"
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import { basename, dirname, join } from "node:path"
import { SessionFs } from "../fs/SessionFs.ts"
import type { SessionFsApi } from "../fs/SessionFs.ts"
import { StoreIoError } from "../fs/StoreError.ts"
import type { StoreError } from "../fs/StoreError.ts"
import { absolutePath } from "../fs/StorePath.ts"
import { evictCachedManifest } from "../log/internal/manifestLru.ts"
import { loadManifest } from "../log/MetaStore.ts"
import { pathsForDir } from "../log/SessionPaths.ts"
import { regularFileUsage } from "./internal/diskUsage.ts"
import { emptyTrash, isSessionEntryName, removeSessionDir } from "./internal/retentionRemove.ts"
import { isSessionLive } from "./Liveness.ts"

/** Name of the pin sidecar inside a session directory (docs/format.md#retention-pin). */
export const RETENTION_PIN_FILE = "retention-pin.json"

/** Options of the retention operations that skip one session. */
export interface RetentionOptions {
  /**
   * The session to leave alone (normally the one being closed): a raw session id or a directory
   * name, compared through `sessionDirName` with the directory entry — never with a manifest.
   */
  readonly preserve?: string
  /**
   * Also remove (and sweep) sessions imported from other agents' files. Off by default: imported
   * history is an archive (docs/import.md#imported-history-is-an-archive) — a session holding `derived/import.json` is
   * never a candidate and never marked abandoned unless the user asks for it.
   */
  readonly includeImported?: boolean
}

/** One removed session: its directory name and the phase that chose it. */
export interface RetentionRemoval {
  readonly id: string
  readonly phase: RetentionPhase
}

/** What one `apply` run did: the abandoned sessions it completed, and what it actually removed. */
export interface RetentionReport {
  readonly marked: ReadonlyArray<string>
  readonly removed: ReadonlyArray<RetentionRemoval>
}

/** The operations of {@link Retention}; every one takes the sessions root first. */
export interface RetentionApi {
  /**
   * `apply_retention_preserving` (docs/log.md#retention-run): empties leftover trash, runs the abandoned sweep,
   * enumerates candidates, then removes Phase 0 (completed, zero turns), Phase 1 (oldest surplus
   * over `maxSessions`) and Phase 2 (older than `maxAgeDays`, disabled at 0). A missing root, a
   * symlinked root or a root that is not a directory yields an empty report and touches nothing.
   * Lists only directories this run removed itself.
   */
  readonly apply: (
    sessionsDir: string,
    policy?: RetentionPolicy,
    options?: RetentionOptions
  ) => Effect.Effect<RetentionReport, StoreError>
  /**
   * `mark_abandoned_active_sessions` (docs/log.md#retention-run): flips `active` manifests whose `updated_at`
   * is older than `maxAgeDays` to `completed` (unknown keys and `updated_at` kept, pretty-printed,
   * atomic private write that refuses a planted link), skipping the preserved, pinned, imported (unless `includeImported`) and live
   * sessions. `maxAgeDays` 0 disables it. Returns the directory names it marked.
   */
  readonly markAbandoned: (
    sessionsDir: string,
    maxAgeDays: number,
    options?: RetentionOptions
  ) => Effect.Effect<ReadonlyArray<string>, StoreError>
  /**
   * Pins a session (docs/format.md#retention-pin, docs/differences.md): writes `retention-pin.json` =
   * `{"reason","pinned_at"}` atomically with mode 0600. Fails `ENOENT`/`ENOTDIR` when the
   * session is not a real directory below the root (it is never created).
   */
  readonly pin: (sessionsDir: string, sessionId: string, reason: string) => Effect.Effect<void, StoreIoError>
  /** Removes a regular pin file or a link at its name (never the link's target): `true` when one was removed. */
  readonly unpin: (sessionsDir: string, sessionId: string) => Effect.Effect<boolean, StoreIoError>
  /** Whether the session is a real directory with anything at `retention-pin.json` (a link there pins too). */
  readonly isPinned: (sessionsDir: string, sessionId: string) => Effect.Effect<boolean, StoreIoError>
  /** Directory names of the pinned sessions, sorted (docs/differences.md); a missing root gives `[]`. */
  readonly pinnedSessions: (sessionsDir: string) => Effect.Effect<ReadonlyArray<string>, StoreIoError>
  /**
   * Close-path hygiene (docs/log.md#retention-other): removes the session if it is a real directory, not pinned,
   * not live, and its manifest says `completed` with zero turns; `true` when it was removed.
   *
   * **Gotchas**: the host must release its own handle first — its own lock makes it live.
   */
  readonly evictZeroTurnCompletedStore: (sessionsDir: string, sessionId: string) => Effect.Effect<boolean, StoreError>
  /**
   * `gc_legacy` (docs/log.md#retention-other): removes the legacy `history/` and `logs/` folders beside the
   * sessions root, returning the bytes of the regular files they held. A link in their place is
   * unlinked (never followed); links inside are not followed; `checkpoints/` is never touched.
   *
   * **Gotchas**: runs only for a root named `sessions` inside `.vtcode` or `.logbook` (else fails
   * `EINVAL`), so a custom root never costs its neighbours their `history` or `logs` folders.
   */
  readonly gcLegacy: (sessionsDir: string) => Effect.Effect<number, StoreIoError>
}

/** The legacy folders `gcLegacy` removes, beside the sessions root. */
const LEGACY_DIRS = ["history", "logs"] as const

/**
 * The store directories a sessions root may sit in for `gcLegacy`: beside a custom root (say
 * `~/sessions`) folders named `history` or `logs` are the user's, not legacy store data.
 */
const STORE_DIRS: ReadonlyArray<string> = [".vtcode", ".logbook"]

const utf8 = new TextDecoder("utf-8")

/** The fields of a candidate that must still hold right before it is removed. */
const sameCandidate = (a: RetentionCandidate, b: RetentionCandidate): boolean =>
  a.status === b.status && a.turnCount === b.turnCount && a.updatedAt === b.updatedAt

const toCandidate = (name: string, m: Manifest): RetentionCandidate => ({
  name,
  status: m.status,
  turnCount: m.turn_count,
  updatedAt: m.updated_at
})

const notADirectory = (operation: string, path: string, found: string) =>
  new StoreIoError({
    operation,
    path,
    code: found === "missing" ? "ENOENT" : "ENOTDIR",
    detail: found === "missing" ? "no such session directory" : `session entry is a ${found}, not a directory`
  })

/** Builds the service over a `SessionFs`. */
export const makeRetention = (fs: SessionFsApi, removals: Ref.Ref<number>): RetentionApi => {
  const live = (dir: string) => isSessionLive(dir).pipe(Effect.provideService(SessionFs, fs))

  const entryType = (path: string) =>
    Effect.map(fs.lstat(path), Option.match({ onNone: () => "missing", onSome: (info) => info.type }))

  /**
   * Pinned = anything sits at the pin's name (the reference treats the pin's presence as pinned): a
   * symbolic link or a directory there pins too, and is never followed. An error while checking
   * counts as pinned (fail safe).
   */
  const pinnedDir = (dir: string) =>
    fs.lstat(join(dir, RETENTION_PIN_FILE)).pipe(
      Effect.map(Option.isSome),
      Effect.catch(() => Effect.succeed(true))
    )

  /**
   * Imported = anything sits at `derived/import.json` (never followed); an error while checking
   * counts as imported (fail safe, like a pin).
   */
  const importedDir = (paths: ReturnType<typeof pathsForDir>) =>
    fs.lstat(paths.importState).pipe(
      Effect.map(Option.isSome),
      Effect.catch(() => Effect.succeed(true))
    )

  /**
   * docs/log.md#retention-candidates for one directory entry: `None` unless it is a real directory, not pinned, not
   * imported (unless `includeImported`), not live, with a readable valid manifest whose status is
   * not `active`. Only the entry's own `lstat` error is returned; every other problem skips it.
   */
  const inspect = (root: string, name: string, includeImported = false) =>
    Effect.gen(function*() {
      const paths = pathsForDir(root, name)
      if ((yield* entryType(paths.dir)) !== "Directory") return Option.none<RetentionCandidate>()
      if (yield* pinnedDir(paths.dir)) return Option.none<RetentionCandidate>()
      if (!includeImported && (yield* importedDir(paths))) return Option.none<RetentionCandidate>()
      if (yield* live(paths.dir)) return Option.none<RetentionCandidate>()
      const manifest = yield* loadManifest(paths.manifest).pipe(
        Effect.provideService(SessionFs, fs),
        Effect.catch(() => Effect.succeed(Option.none<Manifest>()))
      )
      if (Option.isNone(manifest) || manifest.value.status === "active") return Option.none<RetentionCandidate>()
      return Option.some(toCandidate(name, manifest.value))
    })

  const remove = (root: string, name: string) =>
    Ref.getAndUpdate(removals, (n) => n + 1).pipe(Effect.flatMap((seq) => removeSessionDir(fs, root, name, seq)))

  /** The root's type, or "missing"; a symlinked root counts as not a directory. */
  const rootType = (sessionsDir: string) => entryType(absolutePath(sessionsDir))

  const markAbandoned = Effect.fn("Retention.markAbandoned")(
    function*(sessionsDir: string, maxAgeDays: number, options: RetentionOptions = {}) {
      const marked: Array<string> = []
      const cutoff = ageCutoffSeconds(maxAgeDays, yield* Clock.currentTimeMillis)
      if (cutoff === undefined) return marked
      const root = absolutePath(sessionsDir)
      const names = yield* fs.listDir(root).pipe(Effect.catch(() => Effect.succeed<ReadonlyArray<string>>([])))
      const preserved = options.preserve === undefined ? undefined : sessionDirName(options.preserve)
      for (const name of names) {
        if (!isSessionEntryName(name) || name === preserved) continue
        const paths = pathsForDir(root, name)
        const type = yield* entryType(paths.dir).pipe(Effect.catch(() => Effect.succeed("unknown")))
        if (type !== "Directory") continue
        if (yield* pinnedDir(paths.dir)) continue
        if (options.includeImported !== true && (yield* importedDir(paths))) continue
        if (yield* live(paths.dir)) continue
        const bytes = yield* fs.readFileNoFollow(paths.manifest).pipe(
          Effect.catch(() => Effect.succeed(Option.none<Uint8Array>()))
        )
        if (Option.isNone(bytes)) continue
        const rewritten = completeAbandonedManifest(utf8.decode(bytes.value), cutoff)
        if (rewritten === undefined) continue
        yield* Effect.ensuring(
          fs.writeAtomic(paths.manifest, rewritten),
          evictCachedManifest(paths.manifest)
        )
        marked.push(name)
      }
      return marked
    }
  )

  const apply = Effect.fn("Retention.apply")(
    function*(sessionsDir: string, policy: RetentionPolicy = DEFAULT_RETENTION_POLICY, options: RetentionOptions = {}) {
      const root = absolutePath(sessionsDir)
      if ((yield* rootType(root)) !== "Directory") return { marked: [], removed: [] }
      yield* emptyTrash(fs, root)
      const marked = yield* markAbandoned(root, policy.maxAgeDays, options)
      const withImported = options.includeImported === true
      const preserved = options.preserve === undefined ? undefined : sessionDirName(options.preserve)
      const candidates: Array<RetentionCandidate> = []
      for (const name of yield* fs.listDir(root)) {
        if (!isSessionEntryName(name) || name === preserved) continue
        const candidate = yield* inspect(root, name, withImported)
        if (Option.isSome(candidate)) candidates.push(candidate.value)
      }
      const byName = new Map(candidates.map((c) => [c.name, c]))
      const removed: Array<RetentionRemoval> = []
      for (const choice of planRetention(candidates, policy, yield* Clock.currentTimeMillis)) {
        // Inspect again: the session may have been opened, pinned or rewritten since enumeration.
        const before = byName.get(choice.name)
        const now = yield* inspect(root, choice.name, withImported)
        if (before === undefined || Option.isNone(now) || !sameCandidate(before, now.value)) continue
        if (yield* remove(root, choice.name)) removed.push({ id: choice.name, phase: choice.phase })
      }
      return { marked, removed }
    }
  )

  /** The session's directory below the root and what `lstat` says it is. */
  const resolveSession = (sessionsDir: string, sessionId: string) =>
    Effect.gen(function*() {
      const root = absolutePath(sessionsDir)
      const name = sessionDirName(sessionId)
      const paths = pathsForDir(root, name)
      return { root, name, paths, type: yield* entryType(paths.dir) }
    })

  const pin = Effect.fn("Retention.pin")(function*(sessionsDir: string, sessionId: string, reason: string) {
    const s = yield* resolveSession(sessionsDir, sessionId)
    if (s.type !== "Directory") return yield* notADirectory("Retention.pin", s.paths.dir, s.type)
    const pinnedAt = formatRfc3339(yield* Clock.currentTimeMillis)
    yield* fs.writeAtomic(s.paths.pin, JSON.stringify({ reason, pinned_at: pinnedAt }))
  })

  const unpin = Effect.fn("Retention.unpin")(function*(sessionsDir: string, sessionId: string) {
    const s = yield* resolveSession(sessionsDir, sessionId)
    if (s.type !== "Directory") return false
    // A link at the pin's name is unlinked (never its target); a directory there is left alone.
    const type = yield* entryType(s.paths.pin)
    if (type !== "File" && type !== "SymbolicLink") return false
    return yield* fs.removeFile(s.paths.pin)
  })

  const isPinned = Effect.fn("Retention.isPinned")(function*(sessionsDir: string, sessionId: string) {
    const s = yield* resolveSession(sessionsDir, sessionId)
    return s.type === "Directory" && (yield* entryType(s.paths.pin)) !== "missing"
  })

  const pinnedSessions = Effect.fn("Retention.pinnedSessions")(function*(sessionsDir: string) {
    const root = absolutePath(sessionsDir)
    if ((yield* rootType(root)) !== "Directory") return []
    const pinned: Array<string> = []
    for (const name of yield* fs.listDir(root)) {
      if (!isSessionEntryName(name)) continue
      const paths = pathsForDir(root, name)
      if ((yield* entryType(paths.dir)) !== "Directory") continue
      if ((yield* entryType(paths.pin)) !== "missing") pinned.push(name)
    }
    return pinned.sort()
  })

  const evictZeroTurnCompletedStore = Effect.fn("Retention.evictZeroTurnCompletedStore")(
    function*(sessionsDir: string, sessionId: string) {
      const s = yield* resolveSession(sessionsDir, sessionId)
      const candidate = yield* inspect(s.root, s.name)
      if (Option.isNone(candidate) || candidate.value.turnCount !== 0) return false
      return yield* remove(s.root, s.name)
    }
  )

  /** Bytes of the regular files below `dir`, walking real directories only. */
  const regularBytes = (dir: string) => Effect.map(regularFileUsage(fs, dir), (usage) => usage.bytes)

  const gcLegacy = Effect.fn("Retention.gcLegacy")(function*(sessionsDir: string) {
    const root = absolutePath(sessionsDir)
    const base = dirname(root)
    if (basename(root) !== "sessions" || !STORE_DIRS.includes(basename(base))) {
      return yield* new StoreIoError({
        operation: "Retention.gcLegacy",
        path: root,
        code: "EINVAL",
        detail: "legacy folders are only collected beside a <workspace>/.vtcode/sessions or .logbook/sessions root"
      })
    }
    let freed = 0
    for (const legacy of LEGACY_DIRS) {
      const path = join(base, legacy)
      const type = yield* entryType(path)
      if (type === "SymbolicLink") {
        yield* fs.removeFile(path)
      } else if (type === "Directory") {
        freed += yield* regularBytes(path)
        yield* fs.removeTree(path)
      }
    }
    return freed
  })

  return { apply, markAbandoned, pin, unpin, isPinned, pinnedSessions, evictZeroTurnCompletedStore, gcLegacy }
}

/**
 * Retention over any session store: one service serves every sessions root, passed to each
 * method. `layer` needs `SessionFs`; time comes from `Clock` (use `TestClock` in tests).
 *
 * **Gotchas**: deleting session files by any other path must apply the same checks (direct
 * child, no symlink, not pinned, not live) — use `evictZeroTurnCompletedStore` or `apply`.
 */
export class Retention extends Context.Service<Retention, RetentionApi>()("@logbook/store/Retention") {
  /** The service over the `SessionFs` in context. */
  static readonly layer: Layer.Layer<Retention, never, SessionFs> = Layer.effect(
    Retention,
    Effect.gen(function*() {
      const fs = yield* SessionFs
      const removals = yield* Ref.make(0)
      return Retention.of(makeRetention(fs, removals))
    })
  )
}
