/**
 * A store to test against: a temporary sessions root (with an `outside` sibling that no store
 * operation may ever touch), the store layers over the real and the fault-injecting file system,
 * and the few calls every store-level test repeats (open a session, append a list of events).
 */
import type { ThreadEvent } from "@logbook/domain"
import type { SessionLog, SessionPaths } from "@logbook/store"
import { EventLog, SessionFs, sessionPaths, SessionRegistry } from "@logbook/store"
import { Effect, Layer } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { TempDirOptions } from "./TempDir.ts"
import { tempDir } from "./TempDir.ts"

/**
 * A fresh registry over the real file system.
 *
 * **Gotchas**: `Layer.fresh`, because nested provides otherwise reuse the parent's memoised
 * layers (and so its registry and its open sessions).
 */
export const nodeLayer = () => Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerNode)

/** A fresh registry over the fault-injecting file system, exposing `FaultController`. */
export const faultyLayer = () => Layer.provideMerge(Layer.fresh(SessionRegistry.layer), SessionFs.layerFaulty())

/** One test workspace: `root` (= `base/sessions`) is the sessions root, `outside` must never be touched. */
export interface TestRoot {
  readonly base: string
  readonly root: string
  readonly outside: string
}

/**
 * A canonical temporary workspace `logbook-<prefix>-XXXXXX` holding an empty `outside`
 * directory (link targets), removed when the scope closes; `root` is not created.
 */
export const sessionsRoot = (
  prefix: string,
  options: TempDirOptions = {}
): Effect.Effect<TestRoot, never, Scope.Scope> =>
  Effect.map(tempDir(prefix, options), (base) => {
    const outside = path.join(base, "outside")
    fs.mkdirSync(outside)
    return { base, root: path.join(base, "sessions"), outside }
  })

/** The paths of session `id` below `root`. */
export const pathsOf = (root: string, id: string): SessionPaths => sessionPaths(root, id)

/** Opens session `id` below `root` for the current scope. */
export const openLog = (root: string, id: string, options: Partial<EventLog.OpenOptions> = {}) =>
  EventLog.open({ sessionsDir: root, sessionId: id, ...options })

/** Appends every event in order. */
export const appendAll = (log: SessionLog, events: ReadonlyArray<ThreadEvent>) =>
  Effect.forEach(events, (e) => log.append(e), { discard: true })
