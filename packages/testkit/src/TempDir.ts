/**
 * Scoped temporary directories for tests: created with a recognisable prefix, canonicalised (so
 * paths compare equal to what the store resolves), and always removed when the scope closes —
 * also when the test fails or is interrupted.
 */
import { Effect, Result } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Options of {@link tempDir}. */
export interface TempDirOptions {
  /**
   * Prefer a RAM-backed file system (`LOGBOOK_TEST_TMP` if set, else `/dev/shm` when writable):
   * suites that run hundreds of durability barriers measure behaviour, not the disk.
   */
  readonly fast?: boolean
  /** Create it below this directory instead (wins over `fast`). */
  readonly parent?: string
}

const isWritableDir = (dir: string): boolean => {
  const stat = Result.try(() => fs.statSync(dir))
  return Result.isSuccess(stat) && stat.success.isDirectory() &&
    Result.isSuccess(Result.try(() => fs.accessSync(dir, fs.constants.W_OK)))
}

/** Where a temporary directory goes. */
export const tempParent = (options: TempDirOptions = {}): string => {
  if (options.parent !== undefined) return options.parent
  if (options.fast !== true) return os.tmpdir()
  const chosen = process.env["LOGBOOK_TEST_TMP"]
  if (chosen !== undefined && chosen.length > 0) return chosen
  return isWritableDir("/dev/shm") ? "/dev/shm" : os.tmpdir()
}

/** Creates `logbook-<prefix>-XXXXXX` synchronously (canonical path); the caller must remove it. */
export const makeTempDirSync = (prefix: string, options: TempDirOptions = {}): string =>
  fs.realpathSync(fs.mkdtempSync(path.join(tempParent(options), `logbook-${prefix}-`)))

/** Removes a directory tree; a missing one is fine. */
export const removeDirSync = (dir: string): void => fs.rmSync(dir, { recursive: true, force: true })

/** A fresh temporary directory `logbook-<prefix>-XXXXXX`, removed with the scope. */
export const tempDir = (prefix: string, options: TempDirOptions = {}): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => makeTempDirSync(prefix, options)),
    (dir) => Effect.sync(() => removeDirSync(dir))
  )

/** A temporary workspace: its root and its default sessions root `<root>/.logbook/sessions`. */
export interface TempWorkspace {
  readonly root: string
  readonly sessions: string
}

/** A temporary workspace (with the given subdirectories created), removed with the scope. */
export const tempWorkspace = (
  prefix: string,
  options: TempDirOptions & { readonly dirs?: ReadonlyArray<string> } = {}
): Effect.Effect<TempWorkspace, never, Scope.Scope> =>
  Effect.map(tempDir(prefix, options), (root) => {
    for (const dir of options.dirs ?? []) fs.mkdirSync(path.join(root, dir), { recursive: true })
    return { root, sessions: path.join(root, ".logbook", "sessions") }
  })
