/**
 * Ed25519 signing of audit packs with `node:crypto` (docs/packs.md#signatures): key pairs in PEM,
 * a short key id, and signing / checking the 32-byte pack digest. Pure computation over key
 * material the caller has read; no file is touched here.
 */
import { AUDIT_PACK_SIGNATURE_ALGORITHM } from "@logbook/domain"
import type { AuditPackSignature } from "@logbook/domain"
import { Effect, Result, Schema } from "effect"
import type { KeyObject } from "node:crypto"
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from "node:crypto"

/** A key file that is not an Ed25519 key of the expected kind (private for signing, public for checking). */
export class InvalidSigningKey extends Schema.TaggedError<InvalidSigningKey>()("InvalidSigningKey", {
  operation: Schema.String,
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.path} is not a usable Ed25519 key: ${this.reason}`
  }
}

/** A freshly generated key pair as PEM text (PKCS #8 private key, SPKI public key). */
export interface SigningKeyPairPem {
  readonly privateKey: string
  readonly publicKey: string
}

/** Generates an Ed25519 key pair. */
export const generateSigningKeyPair = (): SigningKeyPairPem => {
  const pair = generateKeyPairSync("ed25519")
  return {
    privateKey: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    publicKey: pair.publicKey.export({ type: "spki", format: "pem" }).toString()
  }
}

/** The first 16 hex digits of the SHA-256 of a public key's SPKI DER: names the key in a pack. */
export const signingKeyId = (publicKey: KeyObject): string =>
  createHash("sha256").update(publicKey.export({ type: "spki", format: "der" })).digest("hex").slice(0, 16)

const requireEd25519 = (key: KeyObject, path: string, operation: string) =>
  key.asymmetricKeyType === AUDIT_PACK_SIGNATURE_ALGORITHM
    ? Effect.succeed(key)
    : Effect.fail(
      new InvalidSigningKey({ operation, path, reason: `a ${key.asymmetricKeyType ?? "secret"} key, not ed25519` })
    )

/** Parses a PEM private key (read from `path`, named in errors); it must be Ed25519. */
export const parsePrivateSigningKey = (pem: string, path: string): Effect.Effect<KeyObject, InvalidSigningKey> =>
  Effect.try({
    try: () => createPrivateKey({ key: pem, format: "pem" }),
    catch: (cause) =>
      new InvalidSigningKey({
        operation: "PackSigning.parsePrivateKey",
        path,
        reason: `not a PEM private key (${cause instanceof Error ? cause.message : String(cause)})`
      })
  }).pipe(Effect.flatMap((key) => requireEd25519(key, path, "PackSigning.parsePrivateKey")))

/**
 * Parses a PEM public key (read from `path`); it must be Ed25519. A private key is refused, so a
 * verifier never needs the secret.
 */
export const parsePublicSigningKey = (pem: string, path: string): Effect.Effect<KeyObject, InvalidSigningKey> =>
  Effect.try({
    try: () => {
      const key = createPublicKey({ key: pem, format: "pem" })
      if (pem.includes("PRIVATE KEY")) throw new Error("this is a private key; pass the .pub file")
      return key
    },
    catch: (cause) =>
      new InvalidSigningKey({
        operation: "PackSigning.parsePublicKey",
        path,
        reason: cause instanceof Error ? cause.message : String(cause)
      })
  }).pipe(Effect.flatMap((key) => requireEd25519(key, path, "PackSigning.parsePublicKey")))

/** Signs a 32-byte pack digest with an Ed25519 private key. */
export const signPackDigest = (digest: Uint8Array, privateKey: KeyObject): AuditPackSignature => ({
  algorithm: AUDIT_PACK_SIGNATURE_ALGORITHM,
  key_id: signingKeyId(createPublicKey(privateKey)),
  value: sign(null, digest, privateKey).toString("base64")
})

/** Whether `signature` is a valid Ed25519 signature of `digest` by `publicKey` (malformed values are `false`). */
export const checkPackSignature = (
  digest: Uint8Array,
  signature: AuditPackSignature,
  publicKey: KeyObject
): boolean => {
  const checked = Result.try(() => verify(null, digest, publicKey, Buffer.from(signature.value, "base64")))
  return Result.isSuccess(checked) && checked.success
}
