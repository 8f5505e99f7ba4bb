/**
 * How much disk a session (or any directory of the store) takes: the sizes of its regular
 * files, walking real directories only. Read-only; links are never followed.
 */
import { Effect } from "effect"
import { SessionFs } from "../fs/SessionFs.ts"
import { regularFileUsage } from "./internal/diskUsage.ts"

/** Bytes and regular files below a session directory. */
export interface DiskUsage {
  readonly bytes: number
  readonly files: number
}

/** Sums the sizes of the regular files below `dir`, walking real directories only (links are not followed). */
export const diskUsage = Effect.fn("DiskUsage.diskUsage")(function*(dir: string) {
  const fs = yield* SessionFs
  const usage: DiskUsage = yield* regularFileUsage(fs, dir)
  return usage
})
