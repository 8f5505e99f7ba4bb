/**
 * Redaction and bounds for explanations (docs/explain.md#redaction): every recorded string an
 * explanation shows passes through here first, so secrets (`password=…`, bearer tokens, common
 * API-key shapes, private keys) and terminal control characters never reach any output, and no
 * label, identity or path is unbounded. Pure; the digests use the domain's own SHA-256.
 */
import { sha256Hex } from "../internal/sha256.ts"

/** Bound of labels, goals and other public text (characters). */
export const LABEL_LIMIT = 240

/** Bound of identities (task, actor, item ids). */
export const IDENTITY_LIMIT = 256

/** Bound of paths. */
export const PATH_LIMIT = 900

/** Bound of a decision's rationale. */
export const RATIONALE_LIMIT = 1000

/** What truncated text ends with. */
export const TRUNCATION_MARK = " [truncated; inspect evidence]"

/** The replacement of a redacted secret. */
export const REDACTED = "[REDACTED]"

// Control characters except \t and \n (C0, DEL, C1), including ESC, so no ANSI sequence survives.

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu

const SECRET_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  // PEM private keys, whole block (or up to the end when it was cut).
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/gu, REDACTED],
  // Authorization headers.
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gu, `$1 ${REDACTED}`],
  // key=value / key: value assignments of secret-like names.
  [
    /\b((?:[A-Za-z0-9_.-]*[_.-])?(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|auth|authorization|credentials?|private[_-]?key|client[_-]?secret)["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,;&"'}]+)/giu,
    `$1${REDACTED}`
  ],
  // Common key shapes.
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/gu, REDACTED],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/gu, REDACTED],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/gu, REDACTED],
  [/\bAKIA[0-9A-Z]{16}\b/gu, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/gu, REDACTED],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/gu, REDACTED],
  [/\bglpat-[A-Za-z0-9_-]{20,}/gu, REDACTED],
  [/\bnpm_[A-Za-z0-9]{30,}/gu, REDACTED],
  // Credentials inside URLs: scheme://user:pass@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/giu, `$1${REDACTED}@`]
]

/** Removes control characters except `\n` and `\t` (ANSI escapes lose their ESC and become inert text). */
export const dropControlCharacters = (text: string): string => text.replace(CONTROL, "")

// A cheap first look: text matching none of these cannot match any secret pattern.
const MAYBE_SECRET =
  /pass|pwd|secret|token|api|key|auth|credential|bearer|basic|sk-|gh[pousr]_|github_pat|AKIA|AIza|xox|glpat|npm_|:\/\/|BEGIN/iu

/** Replaces every secret-like substring with `[REDACTED]`. */
export const redactSecrets = (text: string): string => {
  if (!MAYBE_SECRET.test(text)) return text
  let out = text
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement)
  return out
}

const truncate = (text: string, limit: number): string => {
  if (text.length <= limit) return text
  // Never split a surrogate pair.
  let end = limit
  const code = text.charCodeAt(end - 1)
  if (code >= 0xd800 && code <= 0xdbff) end--
  return `${text.slice(0, end)}${TRUNCATION_MARK}`
}

const isPlain = (text: string): boolean => {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 32 || (c >= 0x7f && c <= 0x9f)) return false
  }
  return true
}

/**
 * Public text: control characters dropped (except `\n`, `\t`), secrets redacted, then cut to
 * `limit` characters with {@link TRUNCATION_MARK} appended.
 */
export const publicText = (text: string, limit: number = LABEL_LIMIT): string =>
  truncate(redactSecrets(isPlain(text) ? text : dropControlCharacters(text)), limit)

const RUNTIME_ID = /^(?:task|turn)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/u

const digestOf = (text: string): string => sha256Hex(new TextEncoder().encode(text))

/**
 * An identity (task, actor, item id) for output: runtime ids `task-<uuid>` / `turn-<uuid>` pass
 * unchanged; any identity that redaction or the 256-character bound would alter becomes
 * `redacted-id-<sha256 of the original>` (so it stays unique without showing the original).
 */
export const publicIdentity = (id: string): string => {
  if (RUNTIME_ID.test(id)) return id
  const shown = publicText(id, IDENTITY_LIMIT)
  return shown === id ? id : `redacted-id-${digestOf(id)}`
}

/** A path for output: when redaction or the 900-character bound alters it, ` [path-<sha256>]` is appended. */
export const publicPath = (path: string): string => {
  const shown = publicText(path, PATH_LIMIT)
  return shown === path ? path : `${shown} [path-${digestOf(path)}]`
}

const SECRET_KEYS: ReadonlySet<string> = new Set([
  "token",
  "password",
  "passwd",
  "authorization",
  "apikey",
  "secret",
  "accesstoken",
  "refreshtoken",
  "clientsecret",
  "privatekey",
  "credential",
  "credentials"
])

/** Whether a JSON key names a secret (lowercased, `_` and `-` removed, compared with the known names). */
export const isSecretKey = (key: string): boolean => SECRET_KEYS.has(key.toLowerCase().replace(/[-_]/gu, ""))

/**
 * Redacts a parsed JSON value for evidence output: the value of every secret-named key becomes
 * `"[REDACTED]"`, every string (keys included) loses control characters and secret-like
 * substrings. Lengths are not bounded here (evidence is paged instead).
 */
export const redactJson = (value: unknown): unknown => {
  if (typeof value === "string") return redactSecrets(dropControlCharacters(value))
  if (Array.isArray(value)) return value.map(redactJson)
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) {
      out[dropControlCharacters(key)] = isSecretKey(key) ? REDACTED : redactJson(inner)
    }
    return out
  }
  return value
}
