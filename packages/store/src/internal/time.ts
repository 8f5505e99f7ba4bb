/**
 * Timestamp formatting shared by the store: RFC 3339 in UTC with a `+00:00` offset, the
 * form the reference writes, so manifests stay byte-compatible with VT Code readers.
 */

/** Formats epoch milliseconds as RFC 3339 (`2026-10-03T09:12:44.123+00:00`). */
export const isoFromMillis = (ms: number): string => new Date(ms).toISOString().replace("Z", "+00:00")

/** Parses an RFC 3339 timestamp to epoch milliseconds; undefined when it does not parse. */
export const millisFromIso = (text: string): number | undefined => {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return undefined
  const ms = new Date(text).getTime()
  return Number.isNaN(ms) ? undefined : ms
}
