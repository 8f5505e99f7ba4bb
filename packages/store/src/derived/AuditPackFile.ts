/**
 * The write side of audit packs (docs/packs.md): where a session's pack lives, and the private,
 * atomic writes of a pack file and of a signing key pair. Building and checking packs is the
 * read side's job (`@logbook/projections`); only these writes touch the store.
 */
import { AUDIT_PACK_FILE_NAME } from "@logbook/domain"
import { Effect, Option } from "effect"
import * as NodePath from "node:path"
import { SessionFs } from "../fs/SessionFs.ts"
import type { CreateDirError } from "../fs/StoreError.ts"
import { StoreIoError } from "../fs/StoreError.ts"
import type { SessionPaths } from "../log/SessionPaths.ts"

/** The default pack location of a session: `<sid>/derived/audit-pack.json`. */
export const auditPackPath = (paths: SessionPaths): string => NodePath.join(paths.derivedDir, AUDIT_PACK_FILE_NAME)

/**
 * Writes pack text to `destination` with the atomic private write (0600 temp sibling, fsync,
 * rename, fsync of the directory). For the default destination the session's `derived/` is
 * ensured 0700 first; for another destination a missing parent is created 0700 and an existing
 * one is left as it is.
 *
 * **Gotchas**: a crash at any instant leaves the previous pack or the new one, never a mix; a
 * symlink or non-file at `destination` is refused, not followed.
 */
export const writeAuditPackFile = Effect.fn("AuditPackFile.write")(
  function*(paths: SessionPaths, destination: string, text: string) {
    const fs = yield* SessionFs
    const target = NodePath.resolve(destination)
    if (target === auditPackPath(paths)) yield* fs.ensurePrivateDir(paths.derivedDir)
    yield* fs.writeAtomic(target, text)
    return target
  }
)

/** File names `writeSigningKeyPair` uses inside its directory. */
export const SIGNING_KEY_FILES = { privateKey: "audit-pack-signing.key", publicKey: "audit-pack-signing.pub" } as const

/**
 * Writes a PEM key pair into `dir` (created 0700 when missing): the private key and the public key
 * as `SIGNING_KEY_FILES`, both 0600 and atomic. Refuses with `EEXIST` when either file (or a link
 * in its place) already exists, so an existing key is never replaced.
 */
export const writeSigningKeyPair = Effect.fn("AuditPackFile.writeSigningKeyPair")(
  function*(dir: string, privatePem: string, publicPem: string) {
    const fs = yield* SessionFs
    const privatePath = NodePath.resolve(dir, SIGNING_KEY_FILES.privateKey)
    const publicPath = NodePath.resolve(dir, SIGNING_KEY_FILES.publicKey)
    for (const path of [privatePath, publicPath]) {
      if (Option.isSome(yield* fs.lstat(path))) {
        return yield* new StoreIoError({
          operation: "AuditPackFile.writeSigningKeyPair",
          path,
          code: "EEXIST",
          detail: "a key file already exists here; keys are never replaced"
        })
      }
    }
    yield* fs.writeAtomic(privatePath, privatePem)
    yield* fs.writeAtomic(publicPath, publicPem)
    return { privateKey: privatePath, publicKey: publicPath }
  }
)

/** Errors of the pack writes. */
export type AuditPackWriteError = StoreIoError | CreateDirError
