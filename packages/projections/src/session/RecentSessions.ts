/**
 * The sessions of a store, most recently updated first (VT Code's `recent_sessions`; fields in docs/format.md#manifest), with
 * what an operator needs to pick one: counters, status, whether a live process holds it and
 * whether it is pinned. Sessions are found only as direct children of the sessions root (never
 * from manifest contents), manifests are read without following links, and nothing is written.
 */
import type { Manifest } from "@logbook/domain"
import { compareInstants, parseRfc3339 } from "@logbook/domain"
import type { StoreIoError } from "@logbook/store"
import { absolutePath, loadManifestCached, pathsForDir, SessionFs, sessionLockProbe } from "@logbook/store"
import { Effect, Option } from "effect"

/** One session of a listing. `id` is the directory name: the identity every command accepts. */
export interface SessionSummary {
  readonly id: string
  /** The raw id recorded in the manifest (equal to `id` unless the id needed sanitising). */
  readonly manifestSessionId: string
  readonly status: Manifest["status"]
  readonly turnCount: number
  readonly eventCount: number
  readonly createdAt: string
  readonly updatedAt: string
  readonly inTurn: boolean
  /** Some process holds `session.lock` (or it cannot be checked: see `lockIsLink`). */
  readonly live: boolean
  /** `session.lock` is a symbolic link: no lock at all, never followed (retention treats it as live). */
  readonly lockIsLink: boolean
  /** Something sits at `retention-pin.json`: retention never removes the session. */
  readonly pinned: boolean
  /** The pin is a symbolic link (it pins all the same; never followed). */
  readonly pinIsLink: boolean
  /** Imported from another agent's files (`derived/import.json`): an archive retention keeps unless asked. */
  readonly imported: boolean
}

/** A listing: the sessions, and the directory names skipped because their manifest is missing or invalid. */
export interface SessionListing {
  readonly sessionsDir: string
  readonly sessions: ReadonlyArray<SessionSummary>
  readonly unreadable: ReadonlyArray<string>
}

/** Options of {@link recentSessions}. */
export interface RecentSessionsOptions {
  /** At most this many sessions, the most recent (default: all). */
  readonly limit?: number | undefined
}

/**
 * Newest first by parsed `updated_at`; an unparseable timestamp sorts after every parseable one;
 * ties by directory name.
 */
export const compareRecency = (a: SessionSummary, b: SessionSummary): number => {
  const ia = parseRfc3339(a.updatedAt)
  const ib = parseRfc3339(b.updatedAt)
  if (ia !== undefined && ib !== undefined) {
    const c = compareInstants(ib, ia)
    if (c !== 0) return c
  } else if (ia !== undefined) {
    return -1
  } else if (ib !== undefined) {
    return 1
  }
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/**
 * The summary of session `id` from its manifest and the facts a manifest does not hold (liveness,
 * the pin, and whether either is a symbolic link, which listings report as such).
 */
export const summaryOf = (
  id: string,
  m: Manifest,
  live: boolean,
  pinned: boolean,
  links: { readonly lock?: boolean; readonly pin?: boolean; readonly imported?: boolean } = {}
): SessionSummary => ({
  id,
  manifestSessionId: m.session_id,
  status: m.status,
  turnCount: m.turn_count,
  eventCount: m.event_count,
  createdAt: m.created_at,
  updatedAt: m.updated_at,
  inTurn: m.in_turn === true,
  live,
  lockIsLink: links.lock === true,
  pinned,
  pinIsLink: links.pin === true,
  imported: links.imported === true
})

/**
 * Lists the sessions below `sessionsDir`, most recently updated first. Entries that are not real
 * directories (symlinks included) or whose names start with `.` (trash, temporaries) are
 * ignored; directories whose manifest is missing, unreadable or invalid are listed in
 * `unreadable`. A missing root is an empty store.
 *
 * Manifests come through the process-wide manifest LRU (200 entries keyed by path, valid while the
 * file's mtime and size are unchanged; the store's own manifest writes evict their entry), so
 * listing again only re-reads manifests that changed.
 *
 * **Gotchas**: stats every session (O(sessions)); `live` is a snapshot of the lock.
 */
export const recentSessions = Effect.fn("RecentSessions.recentSessions")(
  function*(sessionsDir: string, options: RecentSessionsOptions = {}) {
    const fs = yield* SessionFs
    const root = absolutePath(sessionsDir)
    const rootInfo = yield* fs.lstat(root)
    if (Option.isNone(rootInfo)) return { sessionsDir: root, sessions: [], unreadable: [] } satisfies SessionListing
    const sessions: Array<SessionSummary> = []
    const unreadable: Array<string> = []
    for (const name of yield* fs.listDir(root)) {
      if (name.startsWith(".")) continue
      const paths = pathsForDir(root, name)
      const info = yield* fs.lstat(paths.dir)
      if (Option.isNone(info) || info.value.type !== "Directory") continue
      const manifestInfo = yield* fs.lstat(paths.manifest).pipe(Effect.catch(() => Effect.succeed(Option.none())))
      const manifest = Option.isNone(manifestInfo) || manifestInfo.value.type !== "File"
        ? Option.none<Manifest>()
        : yield* loadManifestCached(paths.manifest, manifestInfo.value).pipe(
          Effect.catch(() => Effect.succeed(Option.none<Manifest>()))
        )
      if (Option.isNone(manifest)) {
        unreadable.push(name)
        continue
      }
      const lock = yield* sessionLockProbe(paths.dir)
      const pin = yield* fs.lstat(paths.pin)
      const pinIsLink = Option.isSome(pin) && pin.value.type === "SymbolicLink"
      const imported = yield* fs.lstat(paths.importState).pipe(
        Effect.map(Option.isSome),
        Effect.catch(() => Effect.succeed(true))
      )
      sessions.push(
        summaryOf(name, manifest.value, lock === "held" || lock === "link", Option.isSome(pin), {
          lock: lock === "link",
          pin: pinIsLink,
          imported
        })
      )
    }
    sessions.sort(compareRecency)
    const limit = options.limit
    const limited = limit === undefined ? sessions : sessions.slice(0, Math.max(0, limit))
    return { sessionsDir: root, sessions: limited, unreadable } satisfies SessionListing
  }
)

/** The error channel of {@link recentSessions}: reading the root itself failed. */
export type RecentSessionsError = StoreIoError
