/**
 * The audit-pack file format (docs/packs.md): `derived/audit-pack.json`, a pretty-printed list of
 * every regular file of a session directory with its size and SHA-256, plus the manifest's id,
 * status and counters. Schema 1 is wire-compatible with the reference store; the two additive
 * keys `pack_digest` and `signature` bind the entries and counters together and are optional on
 * read, so reference packs stay readable (they verify as unsigned).
 *
 * Everything here is pure: the schemas, the entry-path rules a verifier applies before it reads
 * anything, the byte order entries are sorted in, the canonical text the digest is taken over,
 * and the pretty encoder.
 */
import { Result, Schema } from "effect"
import { isJsonObject, parseJsonOrUndefined } from "../internal/jsonText.ts"
import { SessionStatus } from "../log/SessionFiles.ts"

/** The `schema_version` of every pack this store writes and reads (`AUDIT_PACK_SCHEMA_VERSION`). */
export const AUDIT_PACK_SCHEMA_VERSION = 1

/** The pack's file name; any file with this name is left out of a pack, at every depth. */
export const AUDIT_PACK_FILE_NAME = "audit-pack.json"

/** Read size of the streamed digests (64 KiB, as the reference). */
export const AUDIT_PACK_READ_SIZE = 64 * 1024

/** The only signature algorithm packs carry. */
export const AUDIT_PACK_SIGNATURE_ALGORITHM = "ed25519"

/** Domain separation of the digested text, so a pack digest can never be mistaken for another digest. */
const DIGEST_CONTEXT = "logbook-audit-pack-v1\n"

/** A lowercase hex SHA-256. */
const Sha256Hex = Schema.String.pipe(Schema.check(Schema.isPattern(/^[0-9a-f]{64}$/)))

/** One file of a pack: its slash-separated path relative to the session directory, size and SHA-256. */
export const AuditPackEntry = Schema.Struct({
  path: Schema.String,
  bytes: Schema.Natural,
  sha256: Sha256Hex
})

/** A pack entry, see {@link AuditPackEntry}. */
export type AuditPackEntry = typeof AuditPackEntry.Type

/**
 * An Ed25519 signature over the pack digest: `key_id` is the first 16 hex digits of the SHA-256 of
 * the signer's public key (SPKI DER), `value` the 64-byte signature in base64.
 */
export const AuditPackSignature = Schema.Struct({
  algorithm: Schema.Literal(AUDIT_PACK_SIGNATURE_ALGORITHM),
  key_id: Schema.String,
  value: Schema.String
})

/** A pack signature, see {@link AuditPackSignature}. */
export type AuditPackSignature = typeof AuditPackSignature.Type

/**
 * `derived/audit-pack.json` (schema 1). `generated_at` is the only field that differs between two
 * packs of an unchanged session; `pack_digest` and `signature` are this store's additions.
 */
export const SessionAuditPack = Schema.Struct({
  schema_version: Schema.Literal(AUDIT_PACK_SCHEMA_VERSION),
  session_id: Schema.String,
  generated_at: Schema.String,
  status: SessionStatus,
  turn_count: Schema.Natural,
  event_count: Schema.Natural,
  entries: Schema.Array(AuditPackEntry),
  pack_digest: Schema.optionalKey(Sha256Hex),
  signature: Schema.optionalKey(AuditPackSignature)
})

/** A decoded pack, see {@link SessionAuditPack}. */
export type SessionAuditPack = typeof SessionAuditPack.Type

/**
 * A pack that cannot be trusted to describe anything: unreadable JSON, a wrong shape, a schema
 * other than 1, or an entry path that could leave the session directory. Raised before any file
 * of the session is read.
 */
export class InvalidPack extends Schema.TaggedError<InvalidPack>()("InvalidPack", {
  operation: Schema.String,
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `invalid audit pack ${this.path}: ${this.reason}`
  }
}

/**
 * Why an entry path is unsafe, or `undefined` when it is a plain relative path: it must be
 * non-empty, relative, slash-separated, with only normal components (no empty, `.` or `..`
 * component, no backslash, no NUL).
 */
export const entryPathProblem = (path: string): string | undefined => {
  if (path.length === 0) return "empty path"
  if (path.startsWith("/")) return "absolute path"
  if (path.includes("\\")) return "backslash in path"
  if (path.includes("\0")) return "NUL byte in path"
  for (const part of path.split("/")) {
    if (part.length === 0) return "empty path component"
    if (part === "." || part === "..") return `'${part}' component`
  }
  return undefined
}

const utf8 = new TextEncoder()

/** Orders paths by their UTF-8 bytes (the reference's order), not by UTF-16 code units. */
export const comparePathBytes = (a: string, b: string): number => {
  if (a === b) return 0
  const x = utf8.encode(a)
  const y = utf8.encode(b)
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0)
    if (d !== 0) return d
  }
  return x.length - y.length
}

/**
 * The text `pack_digest` is the SHA-256 of: a context line, then compact JSON of the schema
 * version, session id, status, counters and every entry in pack order. `generated_at` and the
 * signature are not part of it, so re-packing an unchanged session gives the same digest.
 */
export const packDigestText = (pack: SessionAuditPack): string =>
  DIGEST_CONTEXT + JSON.stringify({
    schema_version: pack.schema_version,
    session_id: pack.session_id,
    status: pack.status,
    turn_count: pack.turn_count,
    event_count: pack.event_count,
    entries: pack.entries.map((e) => ({ path: e.path, bytes: e.bytes, sha256: e.sha256 }))
  })

/**
 * The file's bytes: pretty JSON (two-space indent, as the reference writes it), keys in declaration
 * order, absent optional keys omitted, no trailing newline.
 */
export const encodeAuditPack = (pack: SessionAuditPack): string =>
  JSON.stringify(
    {
      schema_version: pack.schema_version,
      session_id: pack.session_id,
      generated_at: pack.generated_at,
      status: pack.status,
      turn_count: pack.turn_count,
      event_count: pack.event_count,
      entries: pack.entries.map((e) => ({ path: e.path, bytes: e.bytes, sha256: e.sha256 })),
      ...(pack.pack_digest === undefined ? {} : { pack_digest: pack.pack_digest }),
      ...(pack.signature === undefined ? {} : {
        signature: { algorithm: pack.signature.algorithm, key_id: pack.signature.key_id, value: pack.signature.value }
      })
    },
    null,
    2
  )

const decodePack = Schema.decodeUnknownResult(SessionAuditPack)

/**
 * Decodes pack text read from `path`. Fails with `InvalidPack` for invalid JSON, a `schema_version`
 * other than 1 (naming it), a wrong shape, a duplicated entry, or any unsafe entry path — so a
 * verifier that got a pack from here never reads a file for a path that could leave the session.
 */
export const decodeAuditPackText = (text: string, path: string): Result.Result<SessionAuditPack, InvalidPack> => {
  const invalid = (reason: string) => Result.fail(new InvalidPack({ operation: "AuditPack.read", path, reason }))
  const json = parseJsonOrUndefined(text)
  if (json === undefined || !isJsonObject(json)) return invalid("not a JSON object")
  const version = json["schema_version"]
  if (version !== AUDIT_PACK_SCHEMA_VERSION) {
    return invalid(`unsupported schema_version ${JSON.stringify(version) ?? "(absent)"} (expected 1)`)
  }
  const decoded = decodePack(json)
  if (Result.isFailure(decoded)) return invalid(decoded.failure.message)
  const seen = new Set<string>()
  for (const entry of decoded.success.entries) {
    const problem = entryPathProblem(entry.path)
    if (problem !== undefined) return invalid(`unsafe entry path ${JSON.stringify(entry.path)}: ${problem}`)
    if (seen.has(entry.path)) return invalid(`duplicate entry path ${JSON.stringify(entry.path)}`)
    seen.add(entry.path)
  }
  return Result.succeed(decoded.success)
}
