/**
 * File mirroring: the session's files other than the log, copied into the fleet's `files` table
 * when they change and removed when they vanish, found by the store's no-follow walk.
 */
import { listSessionFiles } from "@logbook/projections"
import type { SessionFsApi, SessionPaths, StoreIoError } from "@logbook/store"
import { fileSignature, sha256Hex } from "@logbook/store"
import { Effect, Option } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodePath from "node:path"

/**
 * The regular files of a session directory, as slash-separated relative paths: temporaries of
 * atomic writes (dot names) and unsafe names are never carried; the log only when `withLog`.
 */
export const sessionFiles = (
  fs: SessionFsApi,
  dir: string,
  withLog: boolean
): Effect.Effect<Array<string>, StoreIoError> => listSessionFiles(fs, dir, { skipDotNames: true, skipLog: !withLog })

/** The size and mtime of every file of a session directory, log included: unchanged means nothing to replicate. */
export const directorySignature = (fs: SessionFsApi, dir: string) =>
  Effect.gen(function*() {
    const files = yield* sessionFiles(fs, dir, true)
    const infos = yield* fs.lstatMany(files.map((f) => NodePath.join(dir, f)))
    return files.map((f, i) => {
      const info = infos[i]
      return info === undefined ? `${f}:-` : `${f}:${fileSignature(info)}`
    }).join("\n")
  })

/** Mirrors the session's other files into `files`: changed ones replaced, vanished ones removed. */
export const syncFiles = (
  sql: SqlClient.SqlClient,
  fs: SessionFsApi,
  paths: SessionPaths,
  session: string,
  signatures: Map<string, string> | undefined
) =>
  Effect.gen(function*() {
    const local = yield* sessionFiles(fs, paths.dir, false)
    const storedRows = yield* sql<{ readonly path: string; readonly sha256: string }>`
      select path, sha256 from files where session_id = ${session}`
    const stored = new Map(storedRows.map((r) => [r.path, r.sha256] as const))
    let written = 0
    const present = new Set<string>()
    for (const path of local) {
      const absolute = NodePath.join(paths.dir, path)
      const info = yield* fs.lstat(absolute)
      if (Option.isNone(info) || info.value.type !== "File") continue
      present.add(path)
      const key = `${session}\u0000${path}`
      const signature = fileSignature(info.value)
      if (stored.has(path) && signatures?.get(key) === signature) continue
      const content = yield* fs.readFileNoFollow(absolute)
      if (Option.isNone(content)) {
        present.delete(path)
        continue
      }
      const sha256 = sha256Hex(content.value)
      if (stored.get(path) !== sha256) {
        yield* sql`
          insert into files (session_id, path, size, sha256, content)
          values (${session}, ${path}, ${content.value.length}, ${sha256}, ${content.value})
          on conflict (session_id, path) do update set
            size = excluded.size, sha256 = excluded.sha256, content = excluded.content, updated_at = now()`
        written++
      }
      signatures?.set(key, signature)
    }
    let removed = 0
    for (const path of stored.keys()) {
      if (present.has(path)) continue
      yield* sql`delete from files where session_id = ${session} and path = ${path}`
      removed++
    }
    return { written, removed }
  })
