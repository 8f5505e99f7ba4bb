/**
 * `logbook pack create|verify|keygen`: audit packs of a session (docs/packs.md). `create` writes
 * the pack (optionally signed), `verify` checks a session against one and exits 5 when anything
 * does not match (4 when the pack itself is invalid), `keygen` writes an Ed25519 key pair.
 */
import type { SessionAuditPack } from "@logbook/domain"
import type { AuditVerification } from "@logbook/projections"
import {
  generateSigningKeyPair,
  parsePrivateSigningKey,
  parsePublicSigningKey,
  publicKeyId,
  readAuditPack,
  verifyAuditPack,
  writeAuditPack
} from "@logbook/projections"
import { auditPackPath, SessionFs, sessionPaths, StoreIoError, writeSigningKeyPair } from "@logbook/store"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { resolve } from "node:path"
import { PackNotVerified } from "../Errors.ts"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { formatBytes, printAll, printJson, printLines } from "../Output.ts"
import { location } from "../Root.ts"

/** Reads a key file without following links. */
export const readKeyFile = Effect.fn("cli.pack.readKeyFile")(function*(path: string) {
  const fs = yield* SessionFs
  const bytes = yield* fs.readFileNoFollow(resolve(path))
  if (Option.isNone(bytes)) {
    return yield* new StoreIoError({ operation: "pack.readKey", path, code: "ENOENT", detail: "no key file here" })
  }
  return new TextDecoder().decode(bytes.value)
})

/** Reads and decodes a pack file given on the command line (`--pack`), with its absolute path. */
export const readPackFile = Effect.fn("cli.pack.readPackFile")(function*(file: string) {
  const path = resolve(file)
  return { pack: yield* readAuditPack(path), path }
})

/** `pack create`. */
const createCommand = Command.make(
  "create",
  {
    session: sessionArgument,
    out: Flag.String("out").pipe(
      Flag.withDescription("Write the pack here instead of <session>/derived/audit-pack.json"),
      Flag.optional
    ),
    sign: Flag.String("sign").pipe(
      Flag.withDescription("Sign the pack with this Ed25519 private key (PEM, e.g. from `logbook pack keygen`)"),
      Flag.optional
    ),
    json: jsonFlag
  },
  Effect.fn("cli.pack.create")(function*({ json, out, session, sign }) {
    const where = yield* location
    const signingKey = Option.isSome(sign)
      ? Option.some(yield* parsePrivateSigningKey(yield* readKeyFile(sign.value), sign.value))
      : Option.none()
    const { pack, path } = yield* writeAuditPack(where.sessionsDir, session, {
      ...(Option.isSome(out) ? { out: out.value } : {}),
      ...(Option.isSome(signingKey) ? { signingKey: signingKey.value } : {})
    })
    const bytes = pack.entries.reduce((sum, e) => sum + e.bytes, 0)
    if (json) {
      return yield* printJson({
        session_id: pack.session_id,
        path,
        files: pack.entries.length,
        bytes,
        pack_digest: pack.pack_digest ?? null,
        signed_by: pack.signature?.key_id ?? null
      })
    }
    yield* printLines(
      `Wrote ${path}: ${pack.entries.length} files, ${formatBytes(bytes)}, status ${pack.status}, ` +
        `${pack.turn_count} turns, ${pack.event_count} events`,
      `pack digest ${pack.pack_digest ?? "(none)"}${
        pack.signature === undefined ? ", unsigned" : `, signed by key ${pack.signature.key_id}`
      }`
    )
  })
).pipe(
  Command.withShortDescription("Write an audit pack of a session (optionally signed)"),
  Command.withDescription(
    "Record the SHA-256 and size of every regular file of a session directory (links are never followed, " +
      "audit-pack.json files are left out), with the manifest's id, status and counters and a digest over all " +
      "of it, as pretty JSON written atomically (0600) to derived/audit-pack.json or --out."
  ),
  Command.withExamples([
    { command: "logbook pack create demo", description: "Pack the session `demo`" },
    {
      command: "logbook pack create demo --sign keys/audit-pack-signing.key --out demo.pack.json",
      description: "A signed pack kept outside the session"
    }
  ])
)

/** The `pack verify --json` object. */
export const verificationJson = (session: string, packPath: string, r: AuditVerification) => ({
  session_id: session,
  pack_path: packPath,
  verified: r.verified,
  mismatches: r.mismatches,
  missing: r.missing,
  unaccounted: r.unaccounted,
  mismatch_details: r.mismatchDetails.map((d) => ({ path: d.path, reason: d.reason, detail: d.detail })),
  pack_digest: r.digest,
  signature: r.signature,
  signed_by: r.signedBy ?? null
})

const DIGEST_TEXT: Record<AuditVerification["digest"], string> = {
  valid: "pack digest valid",
  invalid: "pack digest INVALID: the pack file was edited after it was made",
  absent: "no pack digest (a reference-format pack: the pack file itself is not protected)"
}

const signatureText = (r: AuditVerification, keyGiven: boolean): string => {
  switch (r.signature) {
    case "valid":
      return `signature valid (key ${r.signedBy ?? "?"})`
    case "invalid":
      return `signature INVALID for the key given (pack signed by key ${r.signedBy ?? "?"})`
    case "unchecked":
      return `signed by key ${r.signedBy ?? "?"}, not checked (pass --verify-key)`
    case "absent":
      return keyGiven ? "UNSIGNED, but --verify-key asks for a signature" : "unsigned"
  }
}

/** The number of problems that make verification fail. */
export const problemCount = (r: AuditVerification, keyGiven: boolean): number =>
  r.mismatches.length + r.missing.length + (r.digest === "invalid" ? 1 : 0) +
  (r.signature === "invalid" || (keyGiven && r.signature === "absent") ? 1 : 0)

/** The `pack verify` text report of `result` (a session checked against the pack `read` found at `packPath`). */
export const verificationText = (
  packPath: string,
  read: SessionAuditPack,
  result: AuditVerification,
  keyGiven: boolean
): Array<string> => [
  `Audit pack ${packPath} of session ${read.session_id} (generated ${read.generated_at}, ` +
  `${read.entries.length} files)`,
  result.verified
    ? `Verified: every listed file matches; ${DIGEST_TEXT[result.digest]}; ${signatureText(result, keyGiven)}.`
    : "NOT verified:",
  ...result.mismatchDetails.map((d) => `  mismatch  ${d.path}: ${d.detail}`),
  ...result.missing.map((p) => `  missing   ${p}`),
  ...(!result.verified && result.digest === "invalid" ? [`  digest    ${DIGEST_TEXT.invalid}`] : []),
  ...(!result.verified && (result.signature === "invalid" || (keyGiven && result.signature === "absent"))
    ? [`  signature ${signatureText(result, keyGiven)}`]
    : []),
  ...(result.unaccounted.length === 0 ? [] : [
    `Unaccounted (added after packing; informational, not a failure): ${result.unaccounted.length}`,
    ...result.unaccounted.map((p) => `  ${p}`)
  ])
]

/** `pack verify`. */
const verifyCommand = Command.make(
  "verify",
  {
    session: sessionArgument,
    pack: Flag.String("pack").pipe(
      Flag.withDescription("The pack to check (default: <session>/derived/audit-pack.json)"),
      Flag.optional
    ),
    verifyKey: Flag.String("verify-key").pipe(
      Flag.withDescription("Require a valid signature by this Ed25519 public key (PEM)"),
      Flag.optional
    ),
    json: jsonFlag
  },
  Effect.fn("cli.pack.verify")(function*({ json, pack, session, verifyKey }) {
    const where = yield* location
    const publicKey = Option.isSome(verifyKey)
      ? Option.some(yield* parsePublicSigningKey(yield* readKeyFile(verifyKey.value), verifyKey.value))
      : Option.none()
    const packPath = Option.isSome(pack)
      ? resolve(pack.value)
      : auditPackPath(sessionPaths(where.sessionsDir, session))
    const read = yield* readAuditPack(packPath)
    const result = yield* verifyAuditPack(where.sessionsDir, session, read, {
      packPath,
      ...(Option.isSome(publicKey) ? { publicKey: publicKey.value } : {})
    })
    const keyGiven = Option.isSome(publicKey)
    if (json) {
      yield* printJson(verificationJson(session, packPath, result))
    } else {
      yield* printAll(verificationText(packPath, read, result, keyGiven))
    }
    if (!result.verified) {
      return yield* new PackNotVerified({ session, pack: packPath, count: problemCount(result, keyGiven) })
    }
  })
).pipe(
  Command.withShortDescription("Check a session against an audit pack; exit 5 on any difference"),
  Command.withDescription(
    "Check a session against an audit pack without following links: every listed file must exist with the " +
      "same size and SHA-256, the pack's own digest must match its contents, and with --verify-key the pack " +
      "must carry a valid signature by that key. Files added after packing are listed as unaccounted but do " +
      "not fail. Exit 0 verified, 5 mismatched or missing files or a wrong digest or signature, 4 invalid pack."
  ),
  Command.withExamples([
    { command: "logbook pack verify demo", description: "Check `demo` against derived/audit-pack.json" },
    {
      command: "logbook pack verify demo --pack demo.pack.json --verify-key keys/audit-pack-signing.pub --json",
      description: "Check a signed pack kept elsewhere; JSON report"
    }
  ])
)

/** `pack keygen`. */
const keygenCommand = Command.make(
  "keygen",
  {
    dir: Argument.String("dir").pipe(Argument.withDescription("Directory for the key pair (created 0700)")),
    json: jsonFlag
  },
  Effect.fn("cli.pack.keygen")(function*({ dir, json }) {
    const pair = generateSigningKeyPair()
    const written = yield* writeSigningKeyPair(resolve(dir), pair.privateKey, pair.publicKey)
    const keyId = publicKeyId(yield* parsePublicSigningKey(pair.publicKey, written.publicKey))
    if (json) {
      return yield* printJson({ private_key: written.privateKey, public_key: written.publicKey, key_id: keyId })
    }
    yield* printLines(
      `Wrote the private key ${written.privateKey} (0600; keep it secret) and the public key ${written.publicKey}.`,
      `Key id ${keyId}. Sign with \`logbook pack create <session> --sign ${written.privateKey}\`, check with ` +
        `\`logbook pack verify <session> --verify-key ${written.publicKey}\`.`
    )
  })
).pipe(
  Command.withShortDescription("Write an Ed25519 key pair for signing packs"),
  Command.withDescription(
    "Generate an Ed25519 key pair (PEM) for signing audit packs: audit-pack-signing.key (private, 0600) and " +
      "audit-pack-signing.pub in the directory. Existing key files are never replaced."
  ),
  Command.withExamples([{
    command: "logbook pack keygen keys",
    description: "Write keys/audit-pack-signing.{key,pub}"
  }])
)

/** `pack` with its subcommands. */
export const packCommand = Command.make("pack").pipe(
  Command.withShortDescription("Create, verify and sign audit packs of a session"),
  Command.withDescription(
    "Audit packs pin a snapshot of a session directory: sizes and SHA-256 of every file, a digest over them, " +
      "optionally an Ed25519 signature. create writes one, verify checks a session against one, keygen makes keys."
  ),
  Command.withExamples([
    { command: "logbook pack create demo && logbook pack verify demo", description: "Pin `demo`, then check it" }
  ]),
  Command.withSubcommands([createCommand, verifyCommand, keygenCommand])
)
