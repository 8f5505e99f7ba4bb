/**
 * One shared state per session directory per process (docs/log.md#shared-state). Two handles on the same
 * session share counters, turn numbering and the append buffer; the last release publishes
 * metadata, closes the file and releases `session.lock`.
 */
import { Context, Effect, Equal, Hash, Layer, RcMap } from "effect"
import type { Scope } from "effect"
import { SessionFs } from "../fs/SessionFs.ts"
import type { CreateDirError, StoreIoError } from "../fs/StoreError.ts"
import type { SessionLocked } from "./EventLogError.ts"
import { openSessionState } from "./internal/openSession.ts"
import type { OpenRequest } from "./internal/openSession.ts"
import type { SessionState } from "./internal/sessionState.ts"

/**
 * The key of an open session in the registry: equal by canonical directory alone, so every
 * handle on one directory shares one state, while the request that opens it (the first
 * acquirer's) travels with the key to the lookup.
 */
class OpenKey implements Equal.Equal {
  readonly dir: string
  readonly request: OpenRequest
  constructor(dir: string, request: OpenRequest) {
    this.dir = dir
    this.request = request
  }
  [Equal.symbol](that: unknown): boolean {
    return that instanceof OpenKey && that.dir === this.dir
  }
  [Hash.symbol](): number {
    return Hash.string(this.dir)
  }
}

/**
 * The registry of open sessions of a layer (one per host process), keyed by the canonical session directory. of open sessions, keyed by the canonical session directory.
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
      const map = yield* RcMap.make({ lookup: (key: OpenKey) => openSessionState(fs, key.request) })
      const acquire = Effect.fn("SessionRegistry.acquire")(function*(request: OpenRequest) {
        yield* fs.ensureSessionsRoot(request.paths.sessionsDir)
        const root = yield* fs.realPath(request.paths.sessionsDir)
        const key = `${root}/${request.paths.dir.slice(request.paths.sessionsDir.length + 1)}`
        return yield* RcMap.get(map, new OpenKey(key, request))
      })
      return SessionRegistry.of({ acquire })
    })
  )
}
