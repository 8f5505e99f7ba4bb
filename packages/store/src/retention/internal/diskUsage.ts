/**
 * The one walk that measures a directory tree: regular files below `dir`, through real
 * directories only (links are never followed). Retention reports what it freed with it, and
 * the public `diskUsage` shows a session's footprint with it.
 */
import { Effect, Option } from "effect"
import { join } from "node:path"
import type { SessionFsApi } from "../../fs/SessionFs.ts"
import type { StoreIoError } from "../../fs/StoreError.ts"

/** Bytes and regular files below a directory. */
export interface Usage {
  readonly bytes: number
  readonly files: number
}

/** Sums the sizes of the regular files below `dir`; a missing entry met midway is skipped. */
export const regularFileUsage = (fs: SessionFsApi, dir: string): Effect.Effect<Usage, StoreIoError> =>
  Effect.gen(function*() {
    let bytes = 0
    let files = 0
    const pending = [dir]
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      for (const name of yield* fs.listDir(next)) {
        const path = join(next, name)
        const info = yield* fs.lstat(path)
        if (Option.isNone(info)) continue
        if (info.value.type === "File") {
          bytes += info.value.size
          files++
        } else if (info.value.type === "Directory") {
          pending.push(path)
        }
      }
    }
    return { bytes, files }
  })
