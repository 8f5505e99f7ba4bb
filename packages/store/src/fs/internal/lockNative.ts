/**
 * Typed access to the two functions Logbook uses from `fs-native-extensions`, a CommonJS native
 * addon without type declarations. Node has no `flock`; this addon gives per-open-file-description
 * locks (BSD `flock` on macOS, `F_OFD_SETLK` on Linux) that the kernel releases when the holder's
 * descriptor closes or the process dies — which a PID file or mkdir lock cannot do.
 */
import { Predicate } from "effect"
import { createRequire } from "node:module"

/** The subset of the addon's API the store calls. */
export interface NativeLock {
  /** Non-blocking lock of the whole file; `true` = granted, `false` = held elsewhere; throws on other errors. */
  readonly tryLock: (fd: number, options: { readonly shared: boolean }) => boolean
  /** Releases a lock held through `fd`. */
  readonly unlock: (fd: number) => void
}

const isNativeLock = (value: unknown): value is NativeLock =>
  Predicate.hasProperty(value, "tryLock") && Predicate.isFunction(value.tryLock) &&
  Predicate.hasProperty(value, "unlock") && Predicate.isFunction(value.unlock)

let cached: NativeLock | undefined

const load = (): NativeLock => {
  const loaded: unknown = createRequire(import.meta.url)("fs-native-extensions")
  if (!isNativeLock(loaded)) {
    throw new Error("fs-native-extensions does not export tryLock/unlock")
  }
  return loaded
}

/**
 * The addon, loaded once on first use (loading it eagerly would make importing the store fail
 * on a platform without a prebuilt binary even when no lock is ever taken).
 */
export const nativeLock = (): NativeLock => {
  cached ??= load()
  return cached
}
