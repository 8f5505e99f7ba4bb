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
  childPrefix,
  fileSignature,
  loadManifestCached,
  pathsForDir,
  SessionFs,
  sessionLockProbe
} from "@logbook/store"
import { Effect, Option, Result, Schema, UndefinedOr } from "effect"
import { sep } from "node:path"

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

// One catalog row per session directory, newest first: `[name, sig]` for a manifest that did not
// decode, else `[name, sig, status, turn_count, event_count, created_at, updated_at, in_turn,
// at_seconds, at_nanos]` and the manifest's `session_id` last when it differs from the name.
// Arrays, not objects, and the instant kept parsed: 20 000 keyed objects cost a listing more in
// JSON parsing, garbage collection and RFC 3339 parsing than its 20 000 `lstat`s.
const UnreadableRow = Schema.Tuple([Schema.String, Schema.String])
const SummaryFields = [
  Schema.String,
  Schema.String,
  SessionStatus,
  Schema.Number,
  Schema.Number,
  Schema.String,
  Schema.String,
  Schema.Boolean,
  Schema.NullOr(Schema.Number),
  Schema.Number
] as const
const CatalogRow = Schema.Union([
  UnreadableRow,
  Schema.Tuple(SummaryFields),
  Schema.Tuple([...SummaryFields, Schema.String])
])
type CatalogRow = typeof CatalogRow.Type
const decodeRow = Schema.decodeUnknownResult(CatalogRow)
const utf8 = new TextDecoder("utf-8")
const parseJson: (text: string) => unknown = UndefinedOr.liftThrowable((text: string): unknown => JSON.parse(text))
const isRecord = (u: unknown): u is { readonly [key: string]: unknown } =>
  typeof u === "object" && u !== null && !Array.isArray(u)

type SummaryRow = Exclude<CatalogRow, typeof UnreadableRow.Type>

// The shape `CatalogRow` decodes, checked field by field (the Schema over 20 000 rows would cost
// a third of a listing); a row that does not pass goes through the Schema.
const isPlainRow = (u: unknown): u is CatalogRow => {
  if (!Array.isArray(u) || typeof u[0] !== "string" || typeof u[1] !== "string") return false
  if (u.length === 2) return true
  return (u.length === 10 || (u.length === 11 && typeof u[10] === "string")) &&
    (u[2] === "active" || u[2] === "completed") && typeof u[3] === "number" && typeof u[4] === "number" &&
    typeof u[5] === "string" && typeof u[6] === "string" && typeof u[7] === "boolean" &&
    (u[8] === null || typeof u[8] === "number") && typeof u[9] === "number"
}

const isSummaryRow = (row: CatalogRow): row is SummaryRow => row.length !== 2

// The row of a manifest just read (`undefined`: it did not decode).
const rowOf = (name: string, sig: string, m: Manifest | undefined): CatalogRow => {
  if (m === undefined) return [name, sig]
  const at = parseRfc3339(m.updated_at)
  const fields = [
    name,
    sig,
    m.status,
    m.turn_count,
    m.event_count,
    m.created_at,
    m.updated_at,
    m.in_turn === true,
    at?.seconds ?? null,
    at?.nanos ?? 0
  ] as const
  return m.session_id === name ? fields : [...fields, m.session_id]
}

// `summaryOf` reads only these fields of a manifest.
const rowManifest = (row: SummaryRow): Pick<
  Manifest,
  "session_id" | "status" | "turn_count" | "event_count" | "created_at" | "updated_at" | "in_turn"
> => ({
  session_id: row.length === 11 ? row[10] : row[0],
  status: row[2],
  turn_count: row[3],
  event_count: row[4],
  created_at: row[5],
  updated_at: row[6],
  in_turn: row[7]
})

/**
 * The catalog's rows by directory name, or `undefined` when the file is not a catalog of this
 * version (then it is rebuilt). A row that does not decode is left out: its manifest is read again.
 */
const decodeCatalog = (text: string): Map<string, CatalogRow> | undefined => {
  const value = parseJson(text)
  if (!isRecord(value) || value.format !== "logbook-sessions-catalog" || value.version !== 2) return undefined
  const rows = value.sessions
  if (!Array.isArray(rows)) return undefined
  const out = new Map<string, CatalogRow>()
  for (const row of rows) {
    if (isPlainRow(row)) out.set(row[0], row)
    else {
      const decoded = decodeRow(row)
      if (Result.isSuccess(decoded)) out.set(decoded.success[0], decoded.success)
    }
  }
  return out
}

// Newest first on the instants the rows hold (`compareRecency`'s order), ties by name.
const newestFirst = (a: SummaryRow, b: SummaryRow): number => {
  const x = a[8]
  const y = b[8]
  if (x !== null && y !== null) {
    if (x !== y) return y - x
    if (a[9] !== b[9]) return b[9] - a[9]
  } else if (x !== null) return -1
  else if (y !== null) return 1
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0
}

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
    const prefix = childPrefix(root)
    const manifestOf = (name: string) => `${prefix}${name}${sep}manifest.json`
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
    const cached = decoded ?? new Map<string, CatalogRow>()
    let dirty = decoded === undefined
    const found: Array<SummaryRow> = []
    const unreadableRows: Array<CatalogRow> = []
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
      const hit = cached.get(name)
      let row: CatalogRow
      if (hit !== undefined && hit[1] === sig) row = hit
      else {
        const manifest = yield* loadManifestCached(manifestOf(name), info).pipe(
          Effect.catch(() => Effect.succeed(Option.none<Manifest>()))
        )
        row = rowOf(name, sig, Option.getOrUndefined(manifest))
        dirty = true
      }
      if (isSummaryRow(row)) found.push(row)
      else {
        unreadable.push(name)
        unreadableRows.push(row)
      }
    }
    // Every row kept was either in the catalog or marked it dirty: equal sizes mean equal sets.
    if (cached.size !== found.length + unreadableRows.length) dirty = true
    found.sort(newestFirst)
    if (dirty && options.saveCatalog === true) {
      yield* fs.writeAtomic(
        catalogPath,
        JSON.stringify({ format: "logbook-sessions-catalog", version: 2, sessions: [...found, ...unreadableRows] })
      ).pipe(Effect.catch((e) => Effect.logDebug(`sessions catalog not saved: ${e.message}`)))
    }
    const limit = options.limit
    const limited = (limit === undefined ? found : found.slice(0, Math.max(0, limit))).map((row) =>
      summaryOf(row[0], rowManifest(row), false, false)
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

/** The error channel of {@link recentSessions}: reading the root itself failed. */
export type RecentSessionsError = StoreIoError
