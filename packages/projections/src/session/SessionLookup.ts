/**
 * Finding an existing session below a sessions root, read-only: the one place every reader
 * (inspection, verification, event streams, the CLI) resolves a session id to its directory.
 * Nothing is created, and a link in a session's place is refused rather than followed.
 */
import type { SessionPaths } from "@logbook/store"
import { SessionFs, sessionPaths, StoreIoError } from "@logbook/store"
import { Effect, Option, Schema } from "effect"

/** A session asked for by id has no directory below the sessions root. */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()("SessionNotFound", {
  session: Schema.String,
  sessionsDir: Schema.String
}) {
  override get message(): string {
    return `session ${this.session} not found in ${this.sessionsDir}`
  }
}

/**
 * Resolves an existing session: its directory (`sessionDirName(id)`, so a directory name from a
 * listing works too) must be a real directory directly below the root. Never creates anything.
 * A symlink in its place is refused with `ELOOP` rather than followed.
 */
export const findSession = Effect.fn("SessionLookup.findSession")(function*(sessionsDir: string, sessionId: string) {
  const fs = yield* SessionFs
  const paths: SessionPaths = sessionPaths(sessionsDir, sessionId)
  const info = yield* fs.lstat(paths.dir)
  if (Option.isNone(info) || info.value.type === "File" || info.value.type === "Other") {
    return yield* new SessionNotFound({ session: sessionId, sessionsDir: paths.sessionsDir })
  }
  if (info.value.type === "SymbolicLink") {
    return yield* new StoreIoError({
      operation: "SessionLookup.findSession",
      path: paths.dir,
      code: "ELOOP",
      detail: "the session directory is a symbolic link; the store never follows links"
    })
  }
  return paths
})
