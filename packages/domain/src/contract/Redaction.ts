/**
 * The redaction policy of every exit (docs/security.md): which keys name secrets, which secrets
 * are recognised in text and commands, and the bounds of explanation text. Explanations,
 * evidence, facts, search documents and snippets, events shown on a terminal, the HTML report
 * and the fleet's search tables all pass recorded text through `redactSecrets` / `redactJson`
 * here, so one list decides what is hidden everywhere. Pure; the digests use the domain's own
 * SHA-256.
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

/** Removes control characters except `\n` and `\t` (ANSI escapes lose their ESC and become inert text). */
export const dropControlCharacters = (text: string): string => text.replace(CONTROL, "")

// ---------------------------------------------------------------------------------------------
// Secret-named keys (docs/security.md#secret-named-keys)

// Words that make a key secret wherever they occur inside one of its words ("PGPASSWORD",
// "dbPassword", "AWS_SECRET_ACCESS_KEY", "X-Api-Key", "openaiApiKey").
const SECRET_INSIDE_WORD =
  /password|passwd|passphrase|secret(?!ar(?:y|ies))|credential|cookie|api_?key|access_?key|private_?key|session_?key|account_?key|client_?secret|auth(?!or(?!i[sz]ation))/u

// Words that make a key secret when they end one of its words ("token", "GITHUBTOKEN",
// "access_token"; not "tokens", "tokenizer").
const SECRET_WORD_END = /(?:token|pwd)$/u

// `key` as the last word is secret ("STRIPE_KEY", "signingKey") unless the word before it says
// what kind of non-secret key it is.
const NON_SECRET_KEY_KINDS: ReadonlySet<string> = new Set([
  "public",
  "pub",
  "sort",
  "cache",
  "primary",
  "foreign",
  "partition",
  "idempotency",
  "dedup",
  "dedupe",
  "lookup",
  "row",
  "group",
  "routing",
  "object",
  "map",
  "index",
  "unique",
  "composite",
  "hot",
  "shortcut",
  "react",
  "list",
  "item",
  "i18n",
  "translation",
  "message",
  "column",
  "table",
  "hash",
  "shard"
])

// A secret word followed by one of these names something about the secret, not the secret
// ("token_count", "PASSWORD_FILE", "--password-stdin", "secret_name", "credential.helper",
// and the token accounting of goals and usage: "token_baseline", "token_breakdown").
const DESCRIBING_WORDS: ReadonlySet<string> = new Set([
  "count",
  "baseline",
  "breakdown",
  "breakdowns",
  "total",
  "totals",
  "used",
  "spent",
  "seen",
  "estimate",
  "counts",
  "usage",
  "limit",
  "limits",
  "budget",
  "type",
  "types",
  "kind",
  "length",
  "len",
  "size",
  "file",
  "path",
  "dir",
  "stdin",
  "env",
  "prompt",
  "url",
  "uri",
  "endpoint",
  "name",
  "names",
  "helper",
  "policy",
  "required",
  "enabled",
  "expiry",
  "expires",
  "ttl",
  "hint",
  "label",
  "reset",
  "set",
  "changed",
  "id"
])

const wordsOf = (key: string): Array<string> =>
  key.replace(/([a-z0-9])([A-Z])/gu, "$1 $2").toLowerCase().split(/[^a-z0-9]+/u).filter((w) => w.length > 0)

const isSecretWord = (words: ReadonlyArray<string>, i: number): boolean => {
  const word = words[i] ?? ""
  const previous = words[i - 1]
  const next = words[i + 1]
  if (next !== undefined && DESCRIBING_WORDS.has(next)) return false
  if (SECRET_INSIDE_WORD.test(word)) return true
  if (SECRET_WORD_END.test(word)) {
    // PWD and OLDPWD are the working directory, not a password.
    if (word === "oldpwd" || (word === "pwd" && (previous === undefined || previous === "old"))) return false
    return true
  }
  if ((word === "key" || word === "keys") && next === undefined) {
    return previous !== undefined && !NON_SECRET_KEY_KINDS.has(previous)
  }
  return false
}

/**
 * Whether a key (a JSON key, an environment variable, a header, an option name) names a secret:
 * it is split into words at separators and lower-to-upper case changes, and a word containing
 * `password`, `passwd`, `passphrase`, `secret`, `credential`, `cookie`, `auth` (not `author`),
 * `apikey`, `accesskey`, `privatekey`, `sessionkey`, `accountkey` or `clientsecret`, a word ending
 * in `token` or `pwd` (not the working directory `PWD`), or a last word `key` after a word that
 * is not a non-secret kind (`public`, `sort`, `primary`, …) makes it secret — unless the next word
 * describes the secret instead of holding it (`token_count`, `PASSWORD_FILE`, `secret_name`).
 */
export const isSecretKey = (key: string): boolean => {
  const known = secretKeys.get(key)
  if (known !== undefined) return known
  const secret = keyIsSecret(key)
  remember(secretKeys, key, secret)
  return secret
}

// Keys repeat across the values a reader redacts (every event has `type`, `item`, `text`…):
// each is split and classified once, in a bounded cache that starts over when full.
const KEY_CACHE = 4_096
const secretKeys = new Map<string, boolean>()
const shownKeys = new Map<string, string>()
const remember = <A>(cache: Map<string, A>, key: string, value: A): void => {
  if (key.length > 256) return
  if (cache.size >= KEY_CACHE) cache.clear()
  cache.set(key, value)
}

const keyIsSecret = (key: string): boolean => {
  const words = wordsOf(key)
  for (let i = 0; i < words.length; i++) if (isSecretWord(words, i)) return true
  // Words split at separators may still join into a secret name ("API-KEY", "Private_Key").
  return words.length > 1 && /apikey|accesskey|privatekey|sessionkey|accountkey/u.test(words.join(""))
}

// ---------------------------------------------------------------------------------------------
// Secrets in text (docs/security.md#secrets-in-text-and-commands)

// A quoted value (with backslash escapes) or a bare one up to whitespace or a delimiter.
const VALUE = String.raw`"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|(?![\[{])[^\s,;&"'}\]]+`

// An authorization scheme and its credentials count as one value ("Authorization: Bearer x").
const SCHEMED_VALUE = String.raw`(?:[Bb]earer|[Bb]asic|[Tt]oken|[Dd]igest)\s+[^\s,;"']+`

// NAME= / NAME: / "NAME": with the name optionally quoted (and `--name=`). A name starts only
// where no name character precedes it, so a long dotted or dashed run is scanned once.
const ASSIGNMENT_NAME = new RegExp(
  String.raw`(?<![A-Za-z0-9_.\-])(["']?)(-{0,2}[A-Za-z_][A-Za-z0-9_.\-]*)\1(\s*[:=]\s*)`,
  "gu"
)

// The value after a secret name's separator, matched where the separator ends.
const ASSIGNMENT_VALUE = new RegExp(String.raw`${SCHEMED_VALUE}|${VALUE}`, "uy")

// --name value (a long option whose name is secret and whose next argument is not an option).
const LONG_OPTION = new RegExp(
  String.raw`(?<![\w-])(--(?!no-)[A-Za-z][A-Za-z0-9_\-]*)([ \t]+)(?!-)("[^"\n]*"|'[^'\n]*'|[^\s"';|&]+)`,
  "gu"
)

const redactValue = (value: string): string => {
  const quote = value[0]
  return quote === "\"" || quote === "'" ? `${quote}${REDACTED}${quote}` : REDACTED
}

/**
 * Redacts the value of each assignment whose name is secret. Only a secret name's value is read
 * (so text full of `a:` or `x=` is scanned once, not once per name), and a non-secret name's
 * value is searched like any text ("note: API_KEY=…", "see: DB_PASSWORD=\"…\"").
 */
const redactAssignments = (text: string): string => {
  const names = new RegExp(ASSIGNMENT_NAME.source, "gu")
  const values = new RegExp(ASSIGNMENT_VALUE.source, "uy")
  let out = ""
  let last = 0
  for (let m = names.exec(text); m !== null; m = names.exec(text)) {
    if (!isSecretKey(m[2] ?? "")) continue
    values.lastIndex = names.lastIndex
    const value = values.exec(text)?.[0]
    if (value === undefined || value === REDACTED) continue
    out += `${text.slice(last, names.lastIndex)}${redactValue(value)}`
    last = names.lastIndex + value.length
    names.lastIndex = last
  }
  return last === 0 ? text : out + text.slice(last)
}

const longOption = (whole: string, option: string, space: string, value: string): string =>
  isSecretKey(option.slice(2)) && value !== REDACTED ? `${option}${space}${redactValue(value)}` : whole

// Credentials of an authorization scheme look like a token, not a word ("Bearer tokens expire").
const looksLikeCredentials = (value: string): boolean => /[0-9+/=._~-]/u.test(value)

// Arguments of one command before the password option: up to 400 characters of its line, before
// any shell operator (bounded, so text naming a program many times is not scanned quadratically).
const ARGS = String.raw`[^\n;|&]{0,400}?`

// One rule: every match of `pattern` replaced by what `replacement` makes of its groups.
const rule = (pattern: RegExp, replacement: (...groups: Array<string>) => string) => (text: string): string =>
  text.replace(pattern, (...args: Array<unknown>) => replacement(...args.map((g) => typeof g === "string" ? g : "")))

/** Each secret shape of text, in the order applied (docs/security.md keeps the same list). */
const SECRET_RULES: ReadonlyArray<(text: string) => string> = [
  // PEM private keys, whole block (or up to the end when it was cut).
  rule(
    /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/gu,
    () => REDACTED
  ),
  // Authorization schemes: Bearer / Basic / Token credentials.
  rule(
    /\b([Bb]earer|[Bb]asic|[Tt]oken)(\s+)([A-Za-z0-9._~+/=-]{8,})/gu,
    (whole, scheme, space, value) => looksLikeCredentials(value) ? `${scheme}${space}${REDACTED}` : whole
  ),
  // Client programs' password arguments: mysql/mariadb -p<pw>, sshpass -p <pw>, curl/wget -u user:pw.
  rule(
    new RegExp(
      String.raw`\b((?:mysql|mariadb|mysqldump|mysqladmin|mariadb-dump)\b${ARGS}\s-p)([^\s'"]+|'[^'\n]*'|"[^"\n]*")`,
      "gu"
    ),
    (_, head, value) => `${head}${redactValue(value)}`
  ),
  rule(
    new RegExp(String.raw`\b(sshpass\b${ARGS}\s-p\s*)([^\s'"]+|'[^'\n]*'|"[^"\n]*")`, "gu"),
    (_, head, value) => `${head}${redactValue(value)}`
  ),
  rule(
    new RegExp(
      String
        .raw`\b((?:curl|wget)\b${ARGS}\s(?:-u\s*|--user[=\s]\s*|--proxy-user[=\s]\s*)['"]?[^\s:'"]*:)([^\s'"]+)`,
      "gu"
    ),
    (whole, head, value) => value === REDACTED ? whole : `${head}${REDACTED}`
  ),
  // NAME=value / NAME: value assignments of secret-named keys; --name value options.
  redactAssignments,
  rule(LONG_OPTION, longOption),
  // Known token shapes.
  rule(/\bsk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_-]{16,}/gu, () => REDACTED),
  rule(/\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}/gu, () => REDACTED),
  rule(/\bwhsec_[A-Za-z0-9]{20,}/gu, () => REDACTED),
  rule(/\bgh[pousr]_[A-Za-z0-9]{20,}/gu, () => REDACTED),
  rule(/\bgithub_pat_[A-Za-z0-9_]{20,}/gu, () => REDACTED),
  rule(/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/gu, () => REDACTED),
  rule(/\bAIza[0-9A-Za-z_-]{30,}/gu, () => REDACTED),
  rule(/\bxox[abposr]-[A-Za-z0-9-]{10,}/gu, () => REDACTED),
  rule(/\bxapp-[A-Za-z0-9-]{10,}/gu, () => REDACTED),
  rule(/\bglpat-[A-Za-z0-9_-]{20,}/gu, () => REDACTED),
  rule(/\bnpm_[A-Za-z0-9]{30,}/gu, () => REDACTED),
  rule(/\bhf_[A-Za-z0-9]{30,}/gu, () => REDACTED),
  // JSON Web Tokens: header.payload.signature, both first parts base64url JSON objects.
  rule(/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/gu, () => REDACTED),
  // Azure shared access signatures (the `sig=` of a SAS URL or connection string).
  rule(/([?&;]sig=)[A-Za-z0-9%+/=]{16,}/gu, (_, head) => `${head}${REDACTED}`),
  // Credentials inside URLs: scheme://user:pass@host.
  rule(/(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/giu, (_, head) => `${head}${REDACTED}@`)
]

// A cheap first look: text matching none of these cannot match any secret pattern.
const MAYBE_SECRET =
  /pass|pwd|secret|token|key|auth|credential|cookie|bearer|basic|digest|sk-|sk_|rk_|whsec|gh[pousr]_|github_pat|AKIA|ASIA|AIza|xox|xapp|glpat|npm_|hf_|eyJ|sig=|:\/\/|BEGIN|mysql|mariadb|sshpass|curl|wget/iu

/**
 * Replaces every secret in text with `[REDACTED]`: the whole of a PEM private-key block and of
 * each known token shape (AWS, GitHub, OpenAI/Anthropic, Stripe, Slack, Google, GitLab, npm,
 * Hugging Face, JWTs, Azure SAS signatures), the credentials of an authorization scheme, the value
 * of every assignment or long option whose name {@link isSecretKey} calls secret, the password
 * arguments of mysql/mariadb (`-p…`), sshpass (`-p …`) and curl/wget (`-u user:…`), and the
 * password of a URL's `user:pass@`. Text without secrets is returned unchanged; redacting twice
 * gives what redacting once gave. The one text policy of every exit (docs/security.md).
 */
export const redactSecrets = (text: string): string => {
  if (!MAYBE_SECRET.test(text)) return text
  let out = text
  for (const redact of SECRET_RULES) out = redact(out)
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

// A key as output shows it (control characters dropped, secrets in it redacted), once per key.
const shownKey = (key: string): string => {
  const known = shownKeys.get(key)
  if (known !== undefined) return known
  const shown = redactSecrets(dropControlCharacters(key))
  remember(shownKeys, key, shown)
  return shown
}

/**
 * Redacts a parsed JSON value for output (evidence, events shown on a terminal): the value of
 * every secret-named key ({@link isSecretKey}) becomes `"[REDACTED]"` unless it is a boolean or
 * `null` (`"has_password": false` says nothing secret), and every string (keys included) loses
 * control characters and has its secrets redacted ({@link redactSecrets}). Lengths are not
 * bounded here (evidence is paged instead).
 */
export const redactJson = (value: unknown): unknown => {
  if (typeof value === "string") return redactSecrets(dropControlCharacters(value))
  if (Array.isArray(value)) return value.map(redactJson)
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) {
      const hidden = isSecretKey(key) && inner !== null && typeof inner !== "boolean"
      out[shownKey(key)] = hidden ? REDACTED : redactJson(inner)
    }
    return out
  }
  return value
}
