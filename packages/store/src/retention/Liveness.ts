/**
 * Whether a session directory is in use by a live process (docs/log.md#liveness-lock), judged only from its
 * `session.lock`: retention and the abandoned-session sweep must never touch a live session.
 */
import { Effect } from "effect"
import { join } from "node:path"
import { SessionFs } from "../fs/SessionFs.ts"

/** Name of the liveness lock file inside a session directory (docs/format.md#session-lock). */
export const SESSION_LOCK_FILE = "session.lock"

/**
 * What the session's `session.lock` says (`SessionFs.probeLock`): `absent`, `held`, `free`, or `link`
 * when a symbolic link sits there (no lock; listings report it as such, not as a live process).
 */
export const sessionLockProbe = Effect.fn("Liveness.sessionLockProbe")(function*(sessionDir: string) {
  const fs = yield* SessionFs
  return yield* fs.probeLock(join(sessionDir, SESSION_LOCK_FILE))
})

/**
 * `true` when some open file description — in another process or in this one — holds the
 * session's lock, or when the lock file exists but cannot be opened or is a symbolic link (fail
 * safe: retention never removes what it cannot check); `false` when the lock file is missing or the
 * lock could be taken (it is released at once).
 *
 * **Gotchas**: the answer is a snapshot; a process may take or drop the lock right after.
 */
export const isSessionLive = Effect.fn("Liveness.isSessionLive")(function*(sessionDir: string) {
  const probe = yield* sessionLockProbe(sessionDir)
  return probe === "held" || probe === "link"
})
