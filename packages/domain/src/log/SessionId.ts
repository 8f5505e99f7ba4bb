/**
 * Session id → session directory name (docs/format.md#session-directory-name, docs/differences.md). The reference sanitiser maps
 * distinct ids onto the same directory (`a/b` and `a_b` both become `a_b`), so two sessions
 * would share one log. {@link sessionDirName} keeps the reference name for every id the
 * sanitiser leaves untouched (so existing reference stores open unchanged) and disambiguates
 * every other id with a short hash of the raw id.
 */
import { sha256Hex } from "../internal/sha256.ts"

const SAFE_CHAR = /^[A-Za-z0-9_.-]$/u

/** The directory name used when sanitising leaves nothing (docs/log.md#constants). */
export const FALLBACK_SESSION_DIR = "session"

/**
 * The reference sanitiser, exactly (docs/format.md#session-directory-name): every character that is not an ASCII letter,
 * digit, `-`, `_` or `.` becomes one `_` (a multi-byte character counts as one character);
 * then all leading `.` are removed; an empty result becomes `session`.
 *
 * **Gotchas**: not injective — use {@link sessionDirName} to name directories.
 */
export const sanitizeSessionId = (id: string): string => {
  let out = ""
  // `for…of` walks code points, so a character outside the BMP yields one `_`, like Rust's chars().
  for (const ch of id) out += SAFE_CHAR.test(ch) ? ch : "_"
  let start = 0
  while (start < out.length && out.charCodeAt(start) === 0x2e) start++
  const trimmed = out.slice(start)
  return trimmed.length === 0 ? FALLBACK_SESSION_DIR : trimmed
}

/**
 * The directory name of a session: the id itself when the sanitiser leaves it unchanged
 * (identical to the reference), otherwise the sanitised id, `-`, and the first 8 hex digits of
 * SHA-256 over the id's UTF-8 bytes (`a/b` → `a_b-<hash>`, `""` → `session-<hash>`). The result
 * always matches `/^[A-Za-z0-9_.-]+$/` and never starts with `.`, so it is a single safe path
 * component.
 *
 * **Gotchas**: ids that the reference would have sanitised get a different directory than in a
 * reference store (such sessions are not found under their old name). A safe id that happens to
 * equal `<sanitised other id>-<its 8-hex hash>` would still collide; that takes a deliberately
 * crafted id (a 32-bit hash match). Lone UTF-16 surrogates hash as U+FFFD.
 */
export const sessionDirName = (id: string): string => {
  const sanitized = sanitizeSessionId(id)
  if (sanitized === id) return id
  return `${sanitized}-${sha256Hex(new TextEncoder().encode(id)).slice(0, 8)}`
}
