/**
 * Retention selection (docs/log.md#retention), as pure functions: the policy, the age cutoff, the order of
 * sessions by their parsed `updated_at`, the three removal phases, and the abandoned-session
 * manifest rewrite. The store enumerates candidates from the file system and performs the
 * removals; everything that decides *which* directories go, and in what order, lives here so it
 * can be tested without I/O.
 *
 * Deviations from the reference (docs/differences.md): sessions are ordered by parsed instant
 * (not by the raw timestamp string) with ties broken by directory name, and `maxAgeDays: 0`
 * has exactly one meaning — "no age-based behaviour at all" — instead of disabling the abandoned
 * sweep while making Phase 2 remove every inactive session.
 */
import { Predicate, Result, Schema } from "effect"
import type { Instant } from "./Rfc3339.ts"
import { compareInstants, parseRfc3339 } from "./Rfc3339.ts"
import type { SessionStatus } from "./SessionFiles.ts"

/** Seconds in one day (docs/log.md#constants). */
export const SECONDS_PER_DAY = 86_400

/**
 * How many sessions a store keeps and for how long (docs/log.md#retention). `maxSessions` bounds the
 * number of removable (inactive, unpinned, not live) sessions kept; `0` keeps none of them.
 * `maxAgeDays` is the age limit in days of `updated_at`; `0` disables every age-based
 * behaviour: the abandoned-session sweep and Phase 2 age removal.
 *
 * **Gotchas**: a policy of `{ maxSessions: 0, maxAgeDays: 0 }` still removes every inactive,
 * unpinned, non-live session through the count limit; use a large `maxSessions` to keep them.
 */
export const RetentionPolicy = Schema.Struct({
  maxSessions: Schema.Natural,
  maxAgeDays: Schema.Natural
})

/** A retention policy, see {@link RetentionPolicy}. */
export type RetentionPolicy = typeof RetentionPolicy.Type

/** The default policy: keep at most 50 removable sessions, none older than 30 days (docs/log.md#constants). */
export const DEFAULT_RETENTION_POLICY: RetentionPolicy = { maxSessions: 50, maxAgeDays: 30 }

/**
 * The phase that selected a directory: `zero-turn` (Phase 0, completed sessions without a
 * closed turn), `over-limit` (Phase 1, the oldest beyond `maxSessions`) or `expired` (Phase 2,
 * older than the age cutoff).
 */
export type RetentionPhase = "zero-turn" | "over-limit" | "expired"

/**
 * What the store learnt about one session directory during candidate enumeration: its directory
 * name (the only identity retention uses) and three manifest fields.
 */
export interface RetentionCandidate {
  readonly name: string
  readonly status: SessionStatus
  readonly turnCount: number
  readonly updatedAt: string
}

/** One directory chosen for removal and the phase that chose it. */
export interface RetentionChoice {
  readonly name: string
  readonly phase: RetentionPhase
}

/**
 * The age cutoff in Unix seconds for `maxAgeDays` at `nowMillis`: now − days × 86 400,
 * saturating at 0 (docs/log.md#retention); `undefined` when `maxAgeDays` is 0 (age behaviour disabled).
 */
export const ageCutoffSeconds = (maxAgeDays: number, nowMillis: number): number | undefined =>
  maxAgeDays <= 0 ? undefined : Math.max(0, Math.floor(nowMillis / 1000) - maxAgeDays * SECONDS_PER_DAY)

/**
 * Whether a session last updated at `updatedAt` is older than the cutoff: its Unix second is
 * strictly below `cutoffSeconds` (docs/log.md#retention). An unparseable timestamp is never older, and
 * nothing is older when the cutoff is `undefined` (disabled).
 */
export const isOlderThanCutoff = (updatedAt: string, cutoffSeconds: number | undefined): boolean => {
  if (cutoffSeconds === undefined) return false
  const instant = parseRfc3339(updatedAt)
  return instant !== undefined && instant.seconds < cutoffSeconds
}

interface Ranked {
  readonly candidate: RetentionCandidate
  readonly instant: Instant | undefined
}

const byName = (a: RetentionCandidate, b: RetentionCandidate): number => a.name < b.name ? -1 : a.name > b.name ? 1 : 0

/**
 * Oldest first by parsed instant, ties by directory name. An unparseable `updated_at` ranks as
 * the newest, consistently with "unparseable ⇒ not older": a session whose age cannot be told
 * is the last one the count limit picks.
 */
const byAge = (a: Ranked, b: Ranked): number => {
  if (a.instant !== undefined && b.instant !== undefined) {
    const c = compareInstants(a.instant, b.instant)
    if (c !== 0) return c
  } else if (a.instant !== undefined) {
    return -1
  } else if (b.instant !== undefined) {
    return 1
  }
  return byName(a.candidate, b.candidate)
}

/**
 * Chooses the directories to remove, in removal order, with the phase that chose each
 * (docs/log.md#retention-run): Phase 0 every completed candidate with `turnCount` 0 (by name); Phase 1, when
 * more than `maxSessions` remain, the oldest surplus (by parsed `updated_at`, ties by name);
 * Phase 2 every remaining candidate older than the age cutoff (oldest first), skipped entirely
 * when `maxAgeDays` is 0. Candidates with `status: "active"` are never chosen; a name given
 * twice counts once, as its first occurrence.
 *
 * **Gotchas**: the input must already exclude the preserved, pinned, live and unreadable
 * sessions — this function sees only what the store enumerated.
 */
export const planRetention = (
  candidates: ReadonlyArray<RetentionCandidate>,
  policy: RetentionPolicy,
  nowMillis: number
): ReadonlyArray<RetentionChoice> => {
  const seen = new Set<string>()
  const eligible: Array<RetentionCandidate> = []
  for (const c of candidates) {
    if (seen.has(c.name)) continue
    seen.add(c.name)
    if (c.status !== "active") eligible.push(c)
  }
  eligible.sort(byName)
  const choices: Array<RetentionChoice> = []
  const remaining: Array<Ranked> = []
  for (const candidate of eligible) {
    if (candidate.turnCount === 0) choices.push({ name: candidate.name, phase: "zero-turn" })
    else remaining.push({ candidate, instant: parseRfc3339(candidate.updatedAt) })
  }
  remaining.sort(byAge)
  const surplus = Math.max(0, remaining.length - Math.max(0, policy.maxSessions))
  for (const r of remaining.slice(0, surplus)) choices.push({ name: r.candidate.name, phase: "over-limit" })
  const cutoff = ageCutoffSeconds(policy.maxAgeDays, nowMillis)
  if (cutoff !== undefined) {
    for (const r of remaining.slice(surplus)) {
      if (r.instant !== undefined && r.instant.seconds < cutoff) {
        choices.push({ name: r.candidate.name, phase: "expired" })
      }
    }
  }
  return choices
}

const decodeJsonValue = Schema.decodeUnknownResult(Schema.fromJsonString(Schema.Unknown))

/**
 * The abandoned-session sweep's decision and rewrite for one `manifest.json` (docs/log.md#retention-run):
 * when the text is a JSON object whose `status` is `"active"` and whose `updated_at` is older
 * than the cutoff, returns the same object with `status: "completed"`, pretty-printed with two
 * spaces; otherwise (unparseable, not an object, not active, not old, cutoff disabled)
 * `undefined`. Every other key — unknown ones and the old `updated_at` included — is kept, so
 * the flipped session is immediately eligible for Phase 0 or Phase 2.
 *
 * **Gotchas**: the object goes through `JSON.parse`, so integers beyond 2^53 in unknown keys
 * lose precision and integer-like keys move first (JavaScript object key order); the keys the
 * store itself writes are unaffected.
 */
export const completeAbandonedManifest = (text: string, cutoffSeconds: number | undefined): string | undefined => {
  if (cutoffSeconds === undefined) return undefined
  const decoded = decodeJsonValue(text)
  if (Result.isFailure(decoded)) return undefined
  const value = decoded.success
  if (!Predicate.isObject(value) || Array.isArray(value)) return undefined
  if (!Predicate.hasProperty(value, "status") || value.status !== "active") return undefined
  if (!Predicate.hasProperty(value, "updated_at") || !Predicate.isString(value.updated_at)) return undefined
  if (!isOlderThanCutoff(value.updated_at, cutoffSeconds)) return undefined
  return JSON.stringify({ ...value, status: "completed" }, null, 2)
}
