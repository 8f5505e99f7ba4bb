/**
 * Audit packs, the read side (docs/packs.md): creating a pack of a session directory (SHA-256 and
 * size of every regular file, streamed in 64 KiB reads, links never followed, any
 * `audit-pack.json` left out), reading one back, and verifying a session against it — every
 * entry path validated before anything is read, missing and mismatched files kept apart, added
 * files reported as unaccounted, and the pack's own digest and optional Ed25519 signature checked.
 * Writing the pack file is the store's (`writeAuditPackFile`).
 */
import type { AuditPackEntry, SessionAuditPack } from "@logbook/domain"
import {
  AUDIT_PACK_FILE_NAME,
  AUDIT_PACK_READ_SIZE,
  AUDIT_PACK_SCHEMA_VERSION,
  comparePathBytes,
  decodeAuditPackText,
  decodeManifestText,
  encodeAuditPack,
  entryPathProblem,
  formatRfc3339,
  InvalidPack,
  packDigestText
} from "@logbook/domain"
import type { SessionFsApi, SessionPaths, StoreIoError } from "@logbook/store"
import {
  auditPackPath,
  CorruptFile,
  regularFilesBelow,
  SessionFs,
  StoreIoError as IoError,
  writeAuditPackFile
} from "@logbook/store"
import { Clock, Effect, Option, Result } from "effect"
import type { KeyObject } from "node:crypto"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import { findSession } from "../session/SessionLookup.ts"
import { checkPackSignature, signingKeyId, signPackDigest } from "./PackSigning.ts"

/**
 * Why a listed file does not match: its size, its content, a link in its place or on its path, or
 * not a file; `header` (on `manifest.json`): the pack's session id, status or counters are not
 * the session's.
 */
export type MismatchReason = "size" | "digest" | "link" | "not-a-file" | "header"

/** One mismatched entry, with what was expected and found. */
export interface PackMismatch {
  readonly path: string
  readonly reason: MismatchReason
  readonly detail: string
}

/** State of the pack's own digest: matches its contents, does not (the pack was edited), or absent (a reference pack). */
export type PackDigestState = "valid" | "invalid" | "absent"

/**
 * State of the signature: `valid`/`invalid` against the key given; `unchecked` when signed but no
 * key was given; `absent` when unsigned (a failure only when a key was given).
 */
export type PackSignatureState = "valid" | "invalid" | "unchecked" | "absent"

/**
 * The result of verifying a session against a pack: the reference's four fields (`mismatches`,
 * `missing` and `unaccounted` are sorted paths) plus the details of each mismatch and the state
 * of the pack digest and signature. `verified` needs no mismatch, no missing file, no invalid
 * digest or signature, and a signature when a key was given; unaccounted files are informational.
 */
export interface AuditVerification {
  readonly verified: boolean
  readonly mismatches: ReadonlyArray<string>
  readonly missing: ReadonlyArray<string>
  readonly unaccounted: ReadonlyArray<string>
  readonly mismatchDetails: ReadonlyArray<PackMismatch>
  readonly digest: PackDigestState
  readonly signature: PackSignatureState
  readonly signedBy: string | undefined
}

/** Options of {@link createAuditPack}. */
export interface CreatePackOptions {
  /** Signs the pack digest with this Ed25519 private key. */
  readonly signingKey?: KeyObject
}

/** Options of {@link verifyAuditPack}. */
export interface VerifyPackOptions {
  /** Checks the pack's signature with this Ed25519 public key; an unsigned pack then fails. */
  readonly publicKey?: KeyObject
  /** Where the pack was read from, named in errors. */
  readonly packPath?: string
}

const sha256Bytes = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/** The SHA-256 of a pack's canonical text, raw. */
export const packDigest = (pack: SessionAuditPack): Uint8Array => sha256Bytes(packDigestText(pack))

/**
 * Reads one file (`O_NOFOLLOW`, 64 KiB reads into one buffer) into SHA-256; `bytes` is what was actually read,
 * so a file growing meanwhile is described consistently.
 */
export const digestFile = (fs: SessionFsApi, path: string): Effect.Effect<
  { readonly bytes: number; readonly sha256: string },
  StoreIoError
> =>
  Effect.suspend(() => {
    const hash = createHash("sha256")
    return fs.forEachChunk(path, AUDIT_PACK_READ_SIZE, (chunk) => {
      hash.update(chunk)
    }).pipe(Effect.map((bytes) => ({ bytes, sha256: hash.digest("hex") })))
  })

/** Which children {@link listSessionFiles} leaves out besides links, special files and unsafe names. */
export interface SessionFileFilter {
  /** Leave out every name starting with a dot (the temporaries of atomic writes), directories included. */
  readonly skipDotNames?: boolean | undefined
  /** Leave out the session's log, `events.jsonl` at the top of `dir`. */
  readonly skipLog?: boolean | undefined
  /** Leave out any file named `audit-pack.json`, at any depth. */
  readonly skipAuditPack?: boolean | undefined
}

/**
 * The regular files below `dir` as slash-separated relative paths, in byte order: real
 * directories are descended, links and special files skipped (never followed), any name a pack
 * could not carry safely (a backslash) left out, and whatever `filter` asks left out too.
 */
export const listSessionFiles = (
  fs: SessionFsApi,
  dir: string,
  filter: SessionFileFilter
): Effect.Effect<Array<string>, StoreIoError> =>
  Effect.map(
    regularFilesBelow(fs, dir, (child, name, type) =>
      entryPathProblem(child) === undefined
      && !(filter.skipDotNames === true && name.startsWith("."))
      && !(filter.skipLog === true && child === "events.jsonl")
      && !(type === "File" && filter.skipAuditPack === true && name === AUDIT_PACK_FILE_NAME)),
    (files) => files.map((file) => file.relative).sort(comparePathBytes)
  )

/**
 * The regular files below `dir` as slash-separated relative paths, in byte order: real
 * directories are descended, links and special files skipped (never followed), any file named
 * `audit-pack.json` and any name a pack could not carry safely (a backslash) left out.
 */
export const listPackableFiles = (fs: SessionFsApi, dir: string): Effect.Effect<Array<string>, StoreIoError> =>
  listSessionFiles(fs, dir, { skipAuditPack: true })

const isMissing = (error: StoreIoError) => error.code === "ENOENT" || error.code === "ENOTDIR"

/** Reads the session's manifest for a pack: missing is an I/O error, unparseable is corrupt. */
const readManifest = (fs: SessionFsApi, paths: SessionPaths) =>
  Effect.gen(function*() {
    const bytes = yield* fs.readFileNoFollow(paths.manifest)
    if (Option.isNone(bytes)) {
      return yield* new IoError({
        operation: "AuditPack.create",
        path: paths.manifest,
        code: "ENOENT",
        detail: "the session has no manifest.json to pack"
      })
    }
    const decoded = decodeManifestText(new TextDecoder().decode(bytes.value))
    if (Result.isFailure(decoded)) {
      return yield* new CorruptFile({
        operation: "AuditPack.create",
        path: paths.manifest,
        detail: decoded.failure.message
      })
    }
    return decoded.success
  })

/**
 * Builds a pack of an existing session (nothing is written): the manifest's id, status and
 * counters, every packable file with its size and SHA-256, `generated_at` from `Clock`, the pack
 * digest, and a signature when `signingKey` is given. A file that vanishes between the listing and
 * its digest (a live session's temporary file) is left out.
 *
 * **Gotchas**: on a live session the pack describes each file as it was when it was read; the
 * lock file is included (empty), so such a pack still verifies once the writer has stopped.
 */
export const createAuditPack = Effect.fn("AuditPack.create")(
  function*(sessionsDir: string, sessionId: string, options: CreatePackOptions = {}) {
    const fs = yield* SessionFs
    const paths = yield* findSession(sessionsDir, sessionId)
    const manifest = yield* readManifest(fs, paths)
    const entries: Array<AuditPackEntry> = []
    for (const path of yield* listPackableFiles(fs, paths.dir)) {
      const digest = yield* digestFile(fs, NodePath.join(paths.dir, path)).pipe(
        Effect.map(Option.some),
        Effect.catchIf(isMissing, () => Effect.succeed(Option.none()))
      )
      if (Option.isSome(digest)) entries.push({ path, bytes: digest.value.bytes, sha256: digest.value.sha256 })
    }
    const unsigned: SessionAuditPack = {
      schema_version: AUDIT_PACK_SCHEMA_VERSION,
      session_id: manifest.session_id,
      generated_at: formatRfc3339(yield* Clock.currentTimeMillis),
      status: manifest.status,
      turn_count: manifest.turn_count,
      event_count: manifest.event_count,
      entries
    }
    const digest = packDigest(unsigned)
    const pack: SessionAuditPack = {
      ...unsigned,
      pack_digest: Buffer.from(digest).toString("hex"),
      ...(options.signingKey === undefined ? {} : { signature: signPackDigest(digest, options.signingKey) })
    }
    return { pack, paths }
  }
)

/** Options of {@link writeAuditPack}. */
export interface WritePackOptions extends CreatePackOptions {
  /** Where to write instead of `<sid>/derived/audit-pack.json`. */
  readonly out?: string
}

/**
 * Creates a pack and writes it (pretty JSON, atomic, 0600) to `derived/audit-pack.json` or
 * `options.out`; returns the pack and the absolute path written.
 */
export const writeAuditPack = Effect.fn("AuditPack.write")(
  function*(sessionsDir: string, sessionId: string, options: WritePackOptions = {}) {
    const { pack, paths } = yield* createAuditPack(
      sessionsDir,
      sessionId,
      options.signingKey === undefined ? {} : { signingKey: options.signingKey }
    )
    const path = yield* writeAuditPackFile(paths, options.out ?? auditPackPath(paths), encodeAuditPack(pack))
    return { pack, path }
  }
)

/**
 * Reads and decodes a pack file without following links: missing is a `StoreIoError`; invalid
 * JSON, a wrong shape, a `schema_version` other than 1 or an unsafe entry path is `InvalidPack`.
 */
export const readAuditPack = Effect.fn("AuditPack.read")(function*(path: string) {
  const fs = yield* SessionFs
  const bytes = yield* fs.readFileNoFollow(path)
  if (Option.isNone(bytes)) {
    return yield* new IoError({ operation: "AuditPack.read", path, code: "ENOENT", detail: "no audit pack here" })
  }
  const decoded = decodeAuditPackText(new TextDecoder().decode(bytes.value), path)
  return Result.isFailure(decoded) ? yield* decoded.failure : decoded.success
})

/** Reads the default pack of a session (`<sid>/derived/audit-pack.json`). */
export const readSessionAuditPack = Effect.fn("AuditPack.readSession")(
  function*(sessionsDir: string, sessionId: string) {
    const paths = yield* findSession(sessionsDir, sessionId)
    const path = auditPackPath(paths)
    return { pack: yield* readAuditPack(path), path }
  }
)

/**
 * What a file source holds at a (validated) entry path: a file with its size and streamed
 * SHA-256, nothing, or something that cannot be read as the file (a link, a directory).
 */
export type PackFileFinding =
  | { readonly _tag: "Found"; readonly bytes: number; readonly sha256: string }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unusable"; readonly reason: "link" | "not-a-file"; readonly detail: string }

/**
 * Where the files a pack describes are read from: a session directory ({@link directoryPackSource}),
 * or any other holder of the same bytes (the fleet database). `describe` is called once per pack
 * entry, in pack order, with a path that already passed `entryPathProblem`; `files` lists every
 * packable path the source holds (slash-separated, no `audit-pack.json`), to report unaccounted ones;
 * `manifest` is the bytes of the session's `manifest.json` (none when it has no readable one), to
 * check the pack's session id, status and counters against.
 */
export interface PackFileSource<E, R> {
  readonly describe: (path: string) => Effect.Effect<PackFileFinding, E, R>
  readonly files: Effect.Effect<ReadonlyArray<string>, E, R>
  readonly manifest: Effect.Effect<Option.Option<Uint8Array>, E, R>
}

const MISSING: PackFileFinding = { _tag: "Missing" }
const unusable = (reason: "link" | "not-a-file", detail: string): PackFileFinding => ({
  _tag: "Unusable",
  reason,
  detail
})

/**
 * The files of a session directory as a pack source: each directory on an entry's path must be
 * a real directory (a link there is unusable, a missing one makes the file missing), the file
 * itself must be a regular file (never opened through a link), then it is read for its size and
 * SHA-256; `files` walks the directory as `createAuditPack` does.
 */
export const directoryPackSource = (fs: SessionFsApi, dir: string): PackFileSource<StoreIoError, never> => {
  const dirs = new Map<string, "ok" | "missing" | "link">()
  const describe = (path: string): Effect.Effect<PackFileFinding, StoreIoError> =>
    Effect.gen(function*() {
      const parts = path.split("/")
      for (let i = 1; i < parts.length; i++) {
        const prefix = parts.slice(0, i).join("/")
        let state = dirs.get(prefix)
        if (state === undefined) {
          const info = yield* fs.lstat(NodePath.join(dir, prefix))
          state = Option.isNone(info) || info.value.type === "File" || info.value.type === "Other"
            ? "missing"
            : info.value.type === "SymbolicLink"
            ? "link"
            : "ok"
          dirs.set(prefix, state)
        }
        if (state === "missing") return MISSING
        if (state === "link") return unusable("link", `${prefix} is a symbolic link (not followed)`)
      }
      const absolute = NodePath.join(dir, path)
      const info = yield* fs.lstat(absolute)
      if (Option.isNone(info)) return MISSING
      if (info.value.type === "SymbolicLink") return unusable("link", "a symbolic link (not followed)")
      if (info.value.type !== "File") return unusable("not-a-file", `a ${info.value.type.toLowerCase()}, not a file`)
      return yield* digestFile(fs, absolute).pipe(
        Effect.map((found): PackFileFinding => ({ _tag: "Found", bytes: found.bytes, sha256: found.sha256 })),
        Effect.catchIf(isMissing, () => Effect.succeed(MISSING)),
        Effect.catchIf(
          (e) => e.code === "ELOOP",
          () => Effect.succeed(unusable("link", "a symbolic link (not followed)"))
        )
      )
    })
  const manifest = fs.readFileNoFollow(NodePath.join(dir, "manifest.json")).pipe(
    Effect.catch(() => Effect.succeed(Option.none<Uint8Array>()))
  )
  return { describe, files: listPackableFiles(fs, dir), manifest }
}

/**
 * Why the pack's header (session id, status, turn and event counts) is not the session's, as
 * its `manifest.json` says, or `undefined` when they agree. A pack of one session passed off as
 * another's must not verify, signed or not.
 */
const headerProblem = (pack: SessionAuditPack, manifest: Option.Option<Uint8Array>): string | undefined => {
  if (Option.isNone(manifest)) {
    return "the session has no readable manifest.json to check the pack's session_id, status and counters against"
  }
  const decoded = decodeManifestText(new TextDecoder().decode(manifest.value))
  if (Result.isFailure(decoded)) {
    return "the session's manifest.json does not decode, so the pack's session_id, status and counters are unchecked"
  }
  const m = decoded.success
  const fields = [
    ["session_id", pack.session_id, m.session_id],
    ["status", pack.status, m.status],
    ["turn_count", pack.turn_count, m.turn_count],
    ["event_count", pack.event_count, m.event_count]
  ] as const
  const wrong = fields.filter(([, packed, actual]) => packed !== actual)
  return wrong.length === 0 ?
    undefined :
    wrong.map(([field, packed, actual]) =>
      `the pack's ${field} is ${JSON.stringify(packed)}, the session's ${JSON.stringify(actual)}`
    ).join("; ")
}

/** The first unsafe entry path of a pack, as an `InvalidPack` for `verify`. */
const validateEntries = (pack: SessionAuditPack, packPath: string): Effect.Effect<void, InvalidPack> => {
  const seen = new Set<string>()
  for (const entry of pack.entries) {
    const problem = entryPathProblem(entry.path) ?? (seen.has(entry.path) ? "duplicate entry" : undefined)
    if (problem !== undefined) {
      return Effect.fail(
        new InvalidPack({
          operation: "AuditPack.verify",
          path: packPath,
          reason: `unsafe entry path ${JSON.stringify(entry.path)}: ${problem}`
        })
      )
    }
    seen.add(entry.path)
  }
  return Effect.void
}

/** Options of {@link verifyPackAgainst}: those of {@link verifyAuditPack}, `packPath` required. */
export interface VerifyPackSourceOptions extends VerifyPackOptions {
  readonly packPath: string
}

/**
 * Verifies a pack against any file source: every entry path is validated first (empty, absolute,
 * `.`, `..`, empty components, backslashes, duplicates → `InvalidPack`, and nothing at all is
 * read); then each listed file is described by the source and compared (size, then SHA-256),
 * missing and mismatched files kept apart, the source's other files reported as unaccounted,
 * and the pack digest (and, with `publicKey`, the signature) checked.
 */
export const verifyPackAgainst = <E, R>(
  pack: SessionAuditPack,
  source: PackFileSource<E, R>,
  options: VerifyPackSourceOptions
): Effect.Effect<AuditVerification, InvalidPack | E, R> =>
  Effect.gen(function*() {
    yield* validateEntries(pack, options.packPath)
    const missing: Array<string> = []
    const details: Array<PackMismatch> = []
    for (const entry of pack.entries) {
      const found = yield* source.describe(entry.path)
      if (found._tag === "Missing") {
        missing.push(entry.path)
      } else if (found._tag === "Unusable") {
        details.push({ path: entry.path, reason: found.reason, detail: found.detail })
      } else if (found.bytes !== entry.bytes) {
        details.push({ path: entry.path, reason: "size", detail: `${found.bytes} bytes, the pack says ${entry.bytes}` })
      } else if (found.sha256 !== entry.sha256) {
        details.push({
          path: entry.path,
          reason: "digest",
          detail: `sha256 ${found.sha256}, the pack says ${entry.sha256}`
        })
      }
    }
    // A manifest that is itself missing or mismatched is reported as such; otherwise the header is checked.
    if (!missing.includes("manifest.json") && !details.some((d) => d.path === "manifest.json")) {
      const problem = headerProblem(pack, yield* source.manifest)
      if (problem !== undefined) details.push({ path: "manifest.json", reason: "header", detail: problem })
    }
    const listed = new Set(pack.entries.map((e) => e.path))
    const unaccounted = (yield* source.files).filter((p) => !listed.has(p))
    const digest = packDigest(pack)
    const digestState: PackDigestState = pack.pack_digest === undefined
      ? "absent"
      : pack.pack_digest === Buffer.from(digest).toString("hex")
      ? "valid"
      : "invalid"
    const signatureState: PackSignatureState = pack.signature === undefined
      ? "absent"
      : options.publicKey === undefined
      ? "unchecked"
      : digestState === "valid" && checkPackSignature(digest, pack.signature, options.publicKey)
      ? "valid"
      : "invalid"
    details.sort((a, b) => comparePathBytes(a.path, b.path))
    const verified = details.length === 0 && missing.length === 0 && digestState !== "invalid" &&
      signatureState !== "invalid" && !(options.publicKey !== undefined && signatureState === "absent")
    return {
      verified,
      mismatches: details.map((d) => d.path),
      missing: missing.sort(comparePathBytes),
      unaccounted,
      mismatchDetails: details,
      digest: digestState,
      signature: signatureState,
      signedBy: pack.signature?.key_id
    } satisfies AuditVerification
  })

/**
 * Verifies a session against a pack. Every entry path is validated first (empty, absolute, `.`,
 * `..`, empty components, backslashes → `InvalidPack`, and nothing at all is read); then each
 * listed file is checked without following links (a link in its place or on its path is a
 * mismatch), missing and mismatched files are kept apart, the directory is walked as by create to
 * find unaccounted files, and the pack digest (and, with `publicKey`, the signature) is checked.
 */
export const verifyAuditPack = Effect.fn("AuditPack.verify")(
  function*(sessionsDir: string, sessionId: string, pack: SessionAuditPack, options: VerifyPackOptions = {}) {
    const packPath = options.packPath ?? `the pack of ${sessionId}`
    yield* validateEntries(pack, packPath)
    const fs = yield* SessionFs
    const paths = yield* findSession(sessionsDir, sessionId)
    return yield* verifyPackAgainst(pack, directoryPackSource(fs, paths.dir), { ...options, packPath })
  }
)

/** The key id a public key has in packs (to compare with `signedBy`). */
export const publicKeyId = (publicKey: KeyObject): string => signingKeyId(publicKey)
