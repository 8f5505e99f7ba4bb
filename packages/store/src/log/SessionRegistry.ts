/**
 * One shared state per session directory per process (docs/log.md#shared-state). Two handles on the same
 * session share counters, turn numbering and the append buffer; the last release publishes
 * metadata, closes the file and releases `session.lock`.
 */
import { Context, Effect, Layer, RcMap } from "effect"
import type { Scope } from "effect"
import { SessionFs } from "../fs/SessionFs.ts"
import type { CreateDirError, StoreIoError } from "../fs/StoreError.ts"
import type { SessionLocked } from "./EventLogError.ts"
import { openSessionState } from "./internal/openSession.ts"
import type { OpenRequest } from "./internal/openSession.ts"
import type { SessionState } from "./internal/sessionState.ts"

/**
 * The process-wide registry of open sessions, keyed by the canonical session directory.
 *
 * **Gotchas**: the key must be canonical (real path of the sessions root + directory name), or
 * two spellings of one path would create two states writing one file.
 */
export class SessionRegistry extends Context.Service<SessionRegistry, {
  readonly acquire: (
    request: OpenRequest
  ) => Effect.Effect<SessionState, StoreIoError | CreateDirError | SessionLocked, Scope.Scope>
}>()("@logbook/store/SessionRegistry") {
  /** The registry backed by an `RcMap`; needs the file system seam. */
  static readonly layer: Layer.Layer<SessionRegistry, never, SessionFs> = Layer.effect(
    SessionRegistry,
    Effect.gen(function*() {
      const fs = yield* SessionFs
      // The RcMap lookup only receives the key; the opener's request travels beside it.
      const pending = new Map<string, OpenRequest>()
      const map = yield* RcMap.make({
        lookup: (dir: string) =>
          Effect.suspend(() => {
            const request = pending.get(dir)
            return request === undefined
              ? Effect.die(new Error(`no open request registered for ${dir}`))
              : openSessionState(fs, request)
          })
      })
      const acquire = Effect.fn("SessionRegistry.acquire")(function*(request: OpenRequest) {
        yield* fs.ensureSessionsRoot(request.paths.sessionsDir)
        const root = yield* fs.realPath(request.paths.sessionsDir)
        const key = `${root}/${request.paths.dir.slice(request.paths.sessionsDir.length + 1)}`
        pending.set(key, request)
        return yield* RcMap.get(map, key).pipe(Effect.ensuring(Effect.sync(() => pending.delete(key))))
      })
      return SessionRegistry.of({ acquire })
    })
  )
}
