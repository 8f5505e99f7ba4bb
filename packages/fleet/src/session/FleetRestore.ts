/**
 * Recreating a session directory from the fleet (docs/fleet.md#fleet-queries), byte-identical to
 * what was replicated: `events.jsonl` rebuilt from the latest epoch's lines streamed in offset
 * order (checked for gaps and against their stored digests), every other file from `files`
 * (checked against its stored size and digest). Everything is written into a private staging
 * directory next to the target (a `.`-name, which listings and retention ignore) and renamed into
 * place at the end, so a failed restore leaves nothing behind and no half session is ever visible.
 *
 * **Gotchas:** an existing session is never overwritten: the target is checked before anything
 * is read and again before the rename (`rename(2)` would replace an empty directory created in
 * between; a non-empty one makes it fail, reported the same way). Each file is fsynced before the
 * rename, but the sessions root is not fsynced after it: a crash right then may lose the rename
 * (the staging directory stays, a `.`-name nothing lists), and the restore can simply run again.
 */
import { sessionDirName } from "@logbook/domain"
import type { CreateDirError, StoreIoError } from "@logbook/store"
import { SessionFs } from "@logbook/store"
import { Clock, Effect, Option, Schema, Stream } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import * as NodePath from "node:path"
import type { FleetError, FleetTarget } from "../db/FleetDatabase.ts"
import type { FleetSessionNotFound, FleetSessionRow } from "../db/FleetSessionData.ts"
import {
  checkedFleetLogLines,
  findFleetSession,
  FleetDataInvalid,
  fleetFileContent,
  fleetFilePathProblem,
  fleetFiles
} from "../db/FleetSessionData.ts"

/** The restore would overwrite an existing session directory (or anything else at its path). */
export class FleetRestoreTargetExists extends Schema.TaggedError<FleetRestoreTargetExists>()(
  "FleetRestoreTargetExists",
  { session: Schema.String, path: Schema.String }
) {
  override get message(): string {
    return `session ${this.session} already exists at ${this.path}; a restore never overwrites a session`
  }
}

/** What a restore wrote. */
export interface FleetRestoreResult {
  readonly row: FleetSessionRow
  /** The session directory created. */
  readonly dir: string
  /** Regular files written, `events.jsonl` included. */
  readonly files: number
  /** Bytes written over all files. */
  readonly bytes: number
  /** Lines of the rebuilt `events.jsonl`. */
  readonly lines: number
}

/** Every failure of {@link restoreFleetSession}. */
export type FleetRestoreError =
  | FleetError
  | FleetSessionNotFound
  | FleetDataInvalid
  | FleetRestoreTargetExists
  | StoreIoError
  | CreateDirError

const OPERATION = "fleet.restore"

/**
 * Restores `session` from the fleet into `<sessionsDir>/<its directory name>`: directories
 * `0700`, files `0600` opened without following links, each file fsynced, then the staging
 * directory renamed into place. Fails with `FleetRestoreTargetExists` when the target exists,
 * `FleetDataInvalid` when what the fleet holds contradicts itself or names a path that cannot be
 * written safely (validated like audit-pack entries, before anything is written).
 */
export const restoreFleetSession = (
  target: FleetTarget,
  session: string,
  sessionsDir: string
): Effect.Effect<FleetRestoreResult, FleetRestoreError, SqlClient.SqlClient | SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const row = yield* findFleetSession(target, OPERATION, session)
    const root = NodePath.resolve(sessionsDir)
    const name = sessionDirName(row.sessionId)
    const dir = NodePath.join(root, name)
    const exists = new FleetRestoreTargetExists({ session: row.sessionId, path: dir })
    if (Option.isSome(yield* fs.lstat(dir))) return yield* exists
    const files = yield* fleetFiles(target, OPERATION, row.sessionId)
    for (const file of files) {
      const problem = fleetFilePathProblem(file.path)
      if (problem !== undefined) {
        return yield* new FleetDataInvalid({
          operation: OPERATION,
          session: row.sessionId,
          target: target.display,
          detail: `the file path ${JSON.stringify(file.path)} cannot be restored: ${problem}`
        })
      }
    }
    yield* fs.ensureSessionsRoot(root)
    const staging = NodePath.join(root, `.restore-${name}.${fs.pid}.${yield* Clock.currentTimeNanos}`)
    const fill = Effect.gen(function*() {
      yield* fs.ensurePrivateDir(staging)
      const log = yield* writeChunks(
        NodePath.join(staging, "events.jsonl"),
        checkedFleetLogLines(target, OPERATION, row.sessionId, row.epoch).pipe(Stream.map((l) => l.bytes))
      )
      let bytes = log.bytes
      for (const file of files) {
        const path = NodePath.join(staging, ...file.path.split("/"))
        yield* fs.ensurePrivateDir(NodePath.dirname(path))
        const written = yield* writeChunks(path, fleetFileContent(target, OPERATION, row.sessionId, file.path))
        if (written.bytes !== file.size || written.sha256 !== file.sha256) {
          return yield* new FleetDataInvalid({
            operation: OPERATION,
            session: row.sessionId,
            target: target.display,
            detail: written.bytes !== file.size
              ? `${file.path} has ${written.bytes} bytes, its row says ${file.size}`
              : `${file.path} does not match its stored SHA-256`
          })
        }
        bytes += written.bytes
      }
      if (Option.isSome(yield* fs.lstat(dir))) return yield* exists
      yield* fs.rename(staging, dir).pipe(
        Effect.catchIf((e) => e.code === "ENOTEMPTY" || e.code === "EEXIST", () => Effect.fail(exists))
      )
      return { row, dir, files: files.length + 1, bytes, lines: log.chunks }
    })
    return yield* fill.pipe(Effect.onError(() => Effect.ignore(fs.removeTree(staging))))
  })

/**
 * Writes a new private file from a stream of chunks (one write per pulled batch), fsyncs it and
 * returns its size, SHA-256 and the number of chunks.
 */
const writeChunks = <E, R>(
  path: string,
  chunks: Stream.Stream<Uint8Array, E, R>
): Effect.Effect<
  { readonly bytes: number; readonly sha256: string; readonly chunks: number },
  E | StoreIoError,
  R | SessionFs
> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const hash = createHash("sha256")
    let bytes = 0
    let count = 0
    yield* Effect.acquireUseRelease(
      fs.openAppend(path),
      (file) =>
        Stream.runForEachArray(chunks, (batch) => {
          const joined = batch.length === 1 && batch[0] !== undefined ? batch[0] : Buffer.concat(batch)
          hash.update(joined)
          bytes += joined.length
          count += batch.length
          return joined.length === 0 ? Effect.void : file.write(joined)
        }).pipe(Effect.andThen(file.datasync)),
      (file) => file.close
    )
    return { bytes, sha256: hash.digest("hex"), chunks: count }
  })
