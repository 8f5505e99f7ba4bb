/**
 * The sessions of a store, most recently updated first (VT Code's `recent_sessions`; fields in docs/format.md#manifest), with
 * what an operator needs to pick one: counters, status, whether a live process holds it and
 * whether it is pinned. Sessions are found only as direct children of the sessions root (never
 * from manifest contents), manifests are read without following links, and the only file ever written
 * is the catalog, when asked (a cache of what manifests say; never a session's files).
 */
import type { Manifest } from "@logbook/domain"
import { compareInstants, parseRfc3339, SessionStatus } from "@logbook/domain"
import type { StoreIoError } from "@logbook/store"
import {
  absolutePath,
  childPath,
  fileSignature,
  loadManifestCached,
  pathsForDir,
  SessionFs,
  sessionLockProbe
} from "@logbook/store"
import { Effect, Option, Result, Schema, UndefinedOr } from "effect"

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
  /**
   * Keep the catalog up to date (write it when a manifest changed): what `logbook sessions` asks
   * for. Default false: the listing writes nothing, though it still uses a catalog it finds.
   */
  readonly saveCatalog?: boolean | undefined
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
  m: Pick<Manifest, "session_id" | "status" | "turn_count" | "event_count" | "created_at" | "updated_at" | "in_turn">,
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

/** The file name of the sessions catalog, directly below the sessions root (a dot name: never a session). */
export const sessionsCatalogName = ".logbook-sessions-catalog.json"

// What a listing needs from a manifest, kept per session with the manifest's (size, mtime).
const CatalogEntry = Schema.Struct({
  sig: Schema.String,
  summary: Schema.NullOr(Schema.Struct({
    session_id: Schema.String,
    status: SessionStatus,
    turn_count: Schema.Number,
    event_count: Schema.Number,
    created_at: Schema.String,
    updated_at: Schema.String,
    in_turn: Schema.Boolean
  }))
})
type CatalogEntry = typeof CatalogEntry.Type
const decodeEntry = Schema.decodeUnknownResult(CatalogEntry)
const utf8 = new TextDecoder("utf-8")
const parseJson: (text: string) => unknown = UndefinedOr.liftThrowable((text: string): unknown => JSON.parse(text))
const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

// The shape `CatalogEntry` decodes, checked field by field (20 000 entries through the Schema cost
// a third of a listing); an entry that does not pass goes through the Schema.
const isPlainEntry = (u: unknown): u is CatalogEntry => {
  if (!isRecord(u) || typeof u.sig !== "string") return false
  const s = u.summary
  if (s === null) return true
  return isRecord(s) && typeof s.session_id === "string" && (s.status === "active" || s.status === "completed") &&
    typeof s.turn_count === "number" && typeof s.event_count === "number" && typeof s.created_at === "string" &&
    typeof s.updated_at === "string" && typeof s.in_turn === "boolean"
}

/**
 * The catalog's entries, or `undefined` when the file is not a catalog (then it is rebuilt). An
 * entry that does not decode is left out: its manifest is read again.
 */
const decodeCatalog = (text: string): Record<string, CatalogEntry> | undefined => {
  const value = parseJson(text)
  if (!isRecord(value) || value.format !== "logbook-sessions-catalog" || value.version !== 1) return undefined
  const sessions = value.sessions
  if (!isRecord(sessions)) return undefined
  const out: Record<string, CatalogEntry> = {}
  for (const name of Object.keys(sessions)) {
    const entry = sessions[name]
    if (isPlainEntry(entry)) out[name] = entry
    else {
      const decoded = decodeEntry(entry)
      if (Result.isSuccess(decoded)) out[name] = decoded.success
    }
  }
  return out
}

const catalogFields = (m: Manifest): NonNullable<CatalogEntry["summary"]> => ({
  session_id: m.session_id,
  status: m.status,
  turn_count: m.turn_count,
  event_count: m.event_count,
  created_at: m.created_at,
  updated_at: m.updated_at,
  in_turn: m.in_turn === true
})

/**
 * Lists the sessions below `sessionsDir`, most recently updated first. Entries that are not real
 * directories (symlinks included) or whose names start with `.` (trash, temporaries) are
 * ignored; directories whose manifest is missing, unreadable or invalid are listed in
 * `unreadable`. A missing root is an empty store.
 *
 * Manifests are read only when the compact catalog beside them (`.logbook-sessions-catalog.json`,
 * what a listing needs from each manifest, keyed by the manifest's size and mtime — the manifest
 * LRU's rule) does not hold them at their current signature; the catalog is rewritten atomically
 * when anything changed and `saveCatalog` is set. Liveness, pins and the import marker are probed only for the sessions
 * listed (the `limit` most recent), so `--limit 20` on 20 000 sessions stats every manifest once
 * and reads none of those unchanged.
 *
 * **Gotchas**: stats every session (O(sessions)); `live` is a snapshot of the lock; a manifest
 * rewritten with the same size within the mtime granularity is seen at its next change (as with
 * the LRU); failing to write the catalog is ignored.
 */
export const recentSessions = Effect.fn("RecentSessions.recentSessions")(
  function*(sessionsDir: string, options: RecentSessionsOptions = {}) {
    const fs = yield* SessionFs
    const root = absolutePath(sessionsDir)
    const rootInfo = yield* fs.lstat(root)
    if (Option.isNone(rootInfo)) return { sessionsDir: root, sessions: [], unreadable: [] } satisfies SessionListing
    // The entries' types come with the listing: no lstat per session directory.
    const candidates = (yield* fs.listDirTypes(root)).filter((e) => !e.name.startsWith(".") && e.type === "Directory")
      .map((e) => e.name)
    const manifestOf = (name: string) => childPath(root, name, "manifest.json")
    const manifests = yield* fs.lstatMany(candidates.map(manifestOf)).pipe(
      // One unreadable entry fails the batch: then each is asked alone, and only it is unreadable.
      Effect.catch(() =>
        Effect.forEach(candidates, (name) =>
          fs.lstat(manifestOf(name)).pipe(
            Effect.map(Option.getOrUndefined),
            Effect.catch(() => Effect.succeed(undefined))
          ))
      )
    )
    const catalogPath = childPath(root, sessionsCatalogName)
    const catalogBytes = yield* fs.readFileNoFollow(catalogPath).pipe(
      Effect.catch(() => Effect.succeed(Option.none<Uint8Array>()))
    )
    const decoded = Option.isNone(catalogBytes) ? undefined : decodeCatalog(utf8.decode(catalogBytes.value))
    const cached = decoded ?? {}
    const next: Record<string, CatalogEntry> = {}
    let dirty = decoded === undefined
    const found: Array<{ readonly name: string; readonly fields: NonNullable<CatalogEntry["summary"]> }> = []
    const unreadable: Array<string> = []
    for (let i = 0; i < candidates.length; i++) {
      const name = candidates[i]
      if (name === undefined) continue
      const info = manifests[i]
      if (info === undefined || info.type !== "File") {
        unreadable.push(name)
        continue
      }
      const sig = fileSignature(info)
      const hit = Object.hasOwn(cached, name) ? cached[name] : undefined
      let entry: CatalogEntry
      if (hit !== undefined && hit.sig === sig) entry = hit
      else {
        const manifest = yield* loadManifestCached(manifestOf(name), info).pipe(
          Effect.catch(() => Effect.succeed(Option.none<Manifest>()))
        )
        entry = { sig, summary: Option.isNone(manifest) ? null : catalogFields(manifest.value) }
        dirty = true
      }
      next[name] = entry
      if (entry.summary === null) unreadable.push(name)
      else found.push({ name, fields: entry.summary })
    }
    if (Object.keys(cached).length !== Object.keys(next).length) dirty = true
    if (dirty && options.saveCatalog === true) {
      yield* fs.writeAtomic(
        catalogPath,
        JSON.stringify({ format: "logbook-sessions-catalog", version: 1, sessions: next })
      ).pipe(Effect.catch((e) => Effect.logDebug(`sessions catalog not saved: ${e.message}`)))
    }
    // Ordered on what the catalog holds (each timestamp parsed once: `compareRecency`'s order);
    // only the sessions listed are probed for locks and pins.
    const keyed = found.map(({ fields, name }) => ({ name, fields, at: parseRfc3339(fields.updated_at) }))
    keyed.sort((a, b) => {
      if (a.at !== undefined && b.at !== undefined) {
        const c = compareInstants(b.at, a.at)
        if (c !== 0) return c
      } else if (a.at !== undefined) return -1
      else if (b.at !== undefined) return 1
      return a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    })
    const limit = options.limit
    const limited = (limit === undefined ? keyed : keyed.slice(0, Math.max(0, limit))).map(({ fields, name }) =>
      summaryOf(name, fieldsManifest(fields), false, false)
    )
    const sessions: Array<SessionSummary> = []
    for (const s of limited) {
      const paths = pathsForDir(root, s.id)
      const lock = yield* sessionLockProbe(paths.dir)
      const pin = yield* fs.lstat(paths.pin)
      const pinIsLink = Option.isSome(pin) && pin.value.type === "SymbolicLink"
      const imported = yield* fs.lstat(paths.importState).pipe(
        Effect.map(Option.isSome),
        Effect.catch(() => Effect.succeed(true))
      )
      sessions.push({
        ...s,
        live: lock === "held" || lock === "link",
        lockIsLink: lock === "link",
        pinned: Option.isSome(pin),
        pinIsLink: pinIsLink,
        imported
      })
    }
    return { sessionsDir: root, sessions, unreadable } satisfies SessionListing
  }
)

// `summaryOf` reads only these fields of a manifest.
const fieldsManifest = (f: NonNullable<CatalogEntry["summary"]>): Pick<
  Manifest,
  "session_id" | "status" | "turn_count" | "event_count" | "created_at" | "updated_at" | "in_turn"
> => f

/** The error channel of {@link recentSessions}: reading the root itself failed. */
export type RecentSessionsError = StoreIoError
