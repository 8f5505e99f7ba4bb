/**
 * Verifying a session's audit pack against what the fleet holds (docs/fleet.md#fleet-queries),
 * so audit evidence outlives the machine that recorded it: the pack is the replicated
 * `derived/audit-pack.json`; `events.jsonl` is the log rebuilt from the latest epoch's lines (in
 * offset order, each followed by `\n`), every other file is its row in `files`. Sizes and SHA-256
 * are recomputed from the stored bytes as they stream, never taken from the stored digests, so a
 * tampered row is found. The comparison itself is the read side's (`verifyPackAgainst`).
 */
import { AUDIT_PACK_FILE_NAME, comparePathBytes, decodeAuditPackText, entryPathProblem } from "@logbook/domain"
import type { SessionAuditPack } from "@logbook/domain"
import type { AuditVerification, PackFileFinding, PackFileSource } from "@logbook/projections"
import { verifyPackAgainst } from "@logbook/projections"
import { Effect, Option, Result, Schema, Stream } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { KeyObject } from "node:crypto"
import type { FleetError, FleetTarget } from "../db/FleetDatabase.ts"
import type { FleetSessionRow } from "../db/FleetSessionData.ts"
import { digestChunks, findFleetSession, fleetFileContent, fleetFiles, fleetLogLines } from "../db/FleetSessionData.ts"

/** The pack `fleet pack verify` reads, relative to the session directory. */
export const FLEET_PACK_PATH = `derived/${AUDIT_PACK_FILE_NAME}`

/** The fleet holds no audit pack for the session (none was made, or it was not replicated yet). */
export class FleetPackMissing extends Schema.TaggedError<FleetPackMissing>()("FleetPackMissing", {
  session: Schema.String,
  pack: Schema.String
}) {
  override get message(): string {
    return `the fleet holds no audit pack for session ${this.session} (${this.pack})`
  }
}

/** Where a fleet session's pack is, as printed: `<host:port/database>:<session>/derived/audit-pack.json`. */
export const fleetPackLocation = (target: FleetTarget, session: string): string =>
  `${target.display}:${session}/${FLEET_PACK_PATH}`

/** A fleet session's files as a pack source: the rebuilt log and the rows of `files`. */
const fleetPackSource = (
  target: FleetTarget,
  row: FleetSessionRow
): Effect.Effect<PackFileSource<FleetError, SqlClient.SqlClient>, FleetError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const operation = "fleet.pack.verify"
    const files = yield* fleetFiles(target, operation, row.sessionId)
    const stored = new Set(files.map((f) => f.path))
    const found = (digest: { readonly bytes: number; readonly sha256: string }): PackFileFinding => ({
      _tag: "Found",
      bytes: digest.bytes,
      sha256: digest.sha256
    })
    const describe = (path: string): Effect.Effect<PackFileFinding, FleetError, SqlClient.SqlClient> =>
      path === "events.jsonl"
        ? Effect.map(
          digestChunks(fleetLogLines(target, operation, row.sessionId, row.epoch).pipe(Stream.map((l) => l.bytes))),
          found
        )
        : stored.has(path)
        ? Effect.map(digestChunks(fleetFileContent(target, operation, row.sessionId, path)), found)
        : Effect.succeed({ _tag: "Missing" })
    const listed = [
      "events.jsonl",
      ...files.map((f) => f.path).filter((p) =>
        p !== "events.jsonl" && entryPathProblem(p) === undefined && !isPackFile(p)
      )
    ].sort(comparePathBytes)
    const manifest = stored.has("manifest.json")
      ? Effect.map(
        Stream.runCollect(fleetFileContent(target, operation, row.sessionId, "manifest.json")),
        (chunks) => Option.some<Uint8Array>(Buffer.concat(chunks))
      )
      : Effect.succeed(Option.none<Uint8Array>())
    return { describe, files: Effect.succeed(listed), manifest }
  })

/** The replicated `derived/audit-pack.json` of a session, decoded; `FleetPackMissing` without one. */
const replicatedPack = (target: FleetTarget, session: string, packPath: string) =>
  Effect.gen(function*() {
    const operation = "fleet.pack.verify"
    const files = yield* fleetFiles(target, operation, session)
    if (!files.some((f) => f.path === FLEET_PACK_PATH)) {
      return yield* new FleetPackMissing({ session, pack: packPath })
    }
    const chunks = yield* Stream.runCollect(fleetFileContent(target, operation, session, FLEET_PACK_PATH))
    const decoded = decodeAuditPackText(new TextDecoder().decode(Buffer.concat(chunks)), packPath)
    return Result.isFailure(decoded) ? yield* decoded.failure : decoded.success
  })

const isPackFile = (path: string): boolean => path === AUDIT_PACK_FILE_NAME || path.endsWith(`/${AUDIT_PACK_FILE_NAME}`)

/** Options of {@link verifyFleetPack}. */
export interface FleetPackVerifyOptions {
  /** Requires a valid signature by this Ed25519 public key; an unsigned pack then fails. */
  readonly publicKey?: KeyObject
  /**
   * Checks this pack (an auditor's own copy, already read and decoded, with the path it came
   * from) instead of the replicated `derived/audit-pack.json`.
   */
  readonly pack?: { readonly pack: SessionAuditPack; readonly path: string }
}

/**
 * Verifies a fleet session against its replicated pack (or the one `options.pack` gives), as
 * `verifyAuditPack` verifies a directory: `FleetSessionNotFound` without the session,
 * `FleetPackMissing` without a pack, `InvalidPack` for a pack that does not decode or names an
 * unsafe path; otherwise the result.
 */
export const verifyFleetPack = (target: FleetTarget, session: string, options: FleetPackVerifyOptions = {}) =>
  Effect.gen(function*() {
    const operation = "fleet.pack.verify"
    const row = yield* findFleetSession(target, operation, session)
    const given = options.pack
    const packPath = given === undefined ? fleetPackLocation(target, row.sessionId) : given.path
    const pack: SessionAuditPack = given === undefined
      ? yield* replicatedPack(target, row.sessionId, packPath)
      : given.pack
    const source = yield* fleetPackSource(target, row)
    const result: AuditVerification = yield* verifyPackAgainst(pack, source, {
      packPath,
      ...(options.publicKey === undefined ? {} : { publicKey: options.publicKey })
    })
    return { row, pack, packPath, result }
  })
