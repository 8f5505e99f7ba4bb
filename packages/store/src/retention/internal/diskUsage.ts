/**
 * What a directory tree weighs: the regular files the no-follow walk (`fs/RegularFiles.ts`)
 * finds below it. Retention reports what it freed with it, and
 * the public `diskUsage` shows a session's footprint with it.
 */
import { Effect } from "effect"
import { regularFilesBelow } from "../../fs/RegularFiles.ts"
import type { SessionFsApi } from "../../fs/SessionFs.ts"
import type { StoreIoError } from "../../fs/StoreError.ts"

/** Bytes and regular files below a directory. */
export interface Usage {
  readonly bytes: number
  readonly files: number
}

/** Sums the sizes of the regular files below `dir` (the no-follow walk); a missing entry met midway is skipped. */
export const regularFileUsage = (fs: SessionFsApi, dir: string): Effect.Effect<Usage, StoreIoError> =>
  Effect.map(regularFilesBelow(fs, dir), (files) => ({
    bytes: files.reduce((sum, file) => sum + file.info.size, 0),
    files: files.length
  }))
