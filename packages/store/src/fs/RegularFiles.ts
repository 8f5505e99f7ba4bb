/**
 * The one walk of a directory tree by the no-follow rule: regular files below a directory,
 * through real directories only. A symbolic link or a special file (FIFO, socket, device) is
 * never opened, never descended into and never reported as a file, whatever its name. Disk usage,
 * audit packs, the replicator's file mirror and the importers' source discovery all walk with it,
 * so the safety rule is implemented once.
 */
import { Effect, Option } from "effect"
import { join } from "node:path"
import type { FileInfo, SessionFsApi } from "./SessionFs.ts"
import type { StoreIoError } from "./StoreError.ts"

/** A regular file the walk found. */
export interface RegularFile {
  /** Its path relative to the walked directory, `/`-separated. */
  readonly relative: string
  /** Its absolute path (the walked directory joined with `relative`). */
  readonly path: string
  /** Its `lstat`. */
  readonly info: FileInfo
}

/**
 * Which entries the walk keeps: called for every real directory and regular file (after its
 * `lstat`, before descending) with its relative path, its name and its type; `false` leaves a
 * file out or a directory unvisited. Links and special files are left out before it is asked.
 */
export type RegularFileFilter = (relative: string, name: string, type: "File" | "Directory") => boolean

/**
 * The regular files below `dir`, depth first in the order `listDir` gives. An entry that vanishes
 * between the listing and its `lstat` is skipped.
 *
 * **Gotchas**: the walk decides from `lstat`, never `stat`: a link is reported by nobody and
 * followed by nobody; callers that then open a file still open it no-follow (it may have been
 * replaced since).
 */
export const regularFilesBelow = (
  fs: SessionFsApi,
  dir: string,
  keep: RegularFileFilter = () => true
): Effect.Effect<Array<RegularFile>, StoreIoError> =>
  Effect.gen(function*() {
    const found: Array<RegularFile> = []
    const walk = (relative: string): Effect.Effect<void, StoreIoError> =>
      Effect.gen(function*() {
        const absolute = relative.length === 0 ? dir : join(dir, relative)
        for (const name of yield* fs.listDir(absolute)) {
          const child = relative.length === 0 ? name : `${relative}/${name}`
          const path = join(absolute, name)
          const info = yield* fs.lstat(path)
          if (Option.isNone(info)) continue
          const type = info.value.type
          if (type !== "File" && type !== "Directory") continue
          if (!keep(child, name, type)) continue
          if (type === "Directory") yield* walk(child)
          else found.push({ relative: child, path, info: info.value })
        }
      })
    yield* walk("")
    return found
  })
