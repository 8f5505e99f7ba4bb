/**
 * RFC 3339 timestamps, the one place they are written and read: every timestamp Logbook
 * records (manifests, turn index `ts`, pins, eviction summaries, progress and goal files) is
 * formatted here, and retention orders sessions by the instants parsed here.
 */

// RFC 3339 needs a four-digit year; clamping keeps `toISOString` from throwing or widening.
const MAX_RFC3339_MS = 253_402_300_799_999

/**
 * How the UTC offset is spelled: `+00:00` (the store's files, as the reference writes them) or
 * `Z` (the goal snapshot's fields, as the reference's goal tracker writes them).
 */
export type Rfc3339Offset = "+00:00" | "Z"

/**
 * Formats epoch milliseconds as RFC 3339 in UTC with millisecond precision
 * (`2026-10-03T09:12:44.123+00:00`), clamped to the years 1970–9999 (a non-finite input gives
 * the epoch), so a broken clock can never make it throw.
 */
export const formatRfc3339 = (epochMs: number, offset: Rfc3339Offset = "+00:00"): string => {
  const ms = Number.isFinite(epochMs) ? Math.min(Math.max(Math.trunc(epochMs), 0), MAX_RFC3339_MS) : 0
  const zulu = new Date(ms).toISOString()
  return offset === "Z" ? zulu : `${zulu.slice(0, -1)}+00:00`
}

/**
 * An instant with nanosecond precision: Unix seconds (floored) and the nanoseconds within that
 * second. Timestamps carry up to nine fractional digits, more than a JavaScript `Date` keeps.
 */
export interface Instant {
  readonly seconds: number
  readonly nanos: number
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/u

/**
 * Parses an RFC 3339 timestamp (`2026-10-03T09:12:44.123456789+00:00`, `…Z`) to an
 * {@link Instant}; `undefined` when the text is not one (including impossible dates such as
 * February 30th). Fractional digits beyond nine are truncated; a leap second `:60` counts as the
 * first second of the next minute.
 */
export const parseRfc3339 = (text: string): Instant | undefined => {
  const m = RFC3339.exec(text)
  if (m === null) return undefined
  const [, y, mo, d, h, mi, s, frac = "", , sign, oh, om] = m
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  const hour = Number(h)
  const minute = Number(mi)
  const second = Number(s)
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return undefined
  // `setUTCFullYear` rather than `Date.UTC`, which maps years 0–99 onto 1900–1999.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  const midnight = date.getTime() / 1000
  const offset = sign === undefined ? 0 : (sign === "-" ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60)
  const nanos = frac.length === 0 ? 0 : Number(frac.slice(0, 9).padEnd(9, "0"))
  return { seconds: midnight + hour * 3600 + minute * 60 + second - offset, nanos }
}

/** Orders two instants: negative when `a` is earlier, positive when later, 0 when equal. */
export const compareInstants = (a: Instant, b: Instant): number =>
  a.seconds !== b.seconds ? a.seconds - b.seconds : a.nanos - b.nanos
