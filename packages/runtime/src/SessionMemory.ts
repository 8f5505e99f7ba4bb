/**
 * The scoped resource an agent host wraps around one session (README.md#embedding): acquiring the
 * layer opens the session's log; releasing it flushes, completes, releases the lock, and
 * then applies the retention policy preserving this session (docs/log.md#retention-other).
 */
import type { RetentionPolicy, SessionMemoryView } from "@logbook/domain"
import { DEFAULT_RETENTION_POLICY } from "@logbook/domain"
import { deriveSessionMemory } from "@logbook/projections"
import type {
  CreateDirError,
  MemoryViewWriteResult,
  OpenError,
  SessionLog,
  StoreIoError,
  SummaryHook
} from "@logbook/store"
import {
  defaultSessionsDir,
  EventLog,
  ManifestCache,
  Retention,
  SessionFs,
  SessionRegistry,
  writeMemoryView
} from "@logbook/store"
import { Context, Effect, Layer } from "effect"
import type { Duration } from "effect"
import type { GoalTracking } from "./GoalTracking.ts"
import { makeGoalTracking } from "./GoalTracking.ts"
import type { MatrixCoordinator } from "./MatrixCoordinator.ts"
import { makeMatrixCoordinator } from "./MatrixCoordinator.ts"

/** Options of {@link SessionMemory.layer}. */
export interface SessionMemoryOptions {
  /** The workspace whose `.logbook/sessions` holds the store (unless `sessionsDir` is given). */
  readonly workspace: string
  /** The raw session id. */
  readonly sessionId: string
  /** The sessions root; defaults to `<workspace>/.logbook/sessions`. */
  readonly sessionsDir?: string | undefined
  /** Event cap (default 10 000; 0 disables). */
  readonly maxEvents?: number | undefined
  /** Byte cap of `events.jsonl` (default 64 MiB; 0 disables). */
  readonly maxBytes?: number | undefined
  /** Summary hook for cap evictions (default: grounded-facts summary in `derived/`). */
  readonly summaryHook?: SummaryHook | undefined
  /** Retention applied on release; `false` turns it off (default `{ maxSessions: 50, maxAgeDays: 30 }`). */
  readonly retention?: RetentionPolicy | false | undefined
  /** Run the durability barrier when bytes have waited this long (off by default). */
  readonly autoFlush?: Duration.Input | undefined
  /** Fail with `SessionLocked` when another process has this session open. */
  readonly requireExclusive?: boolean | undefined
  /**
   * Derive `derived/memory.json` from the log when the session closes, unless the host wrote its
   * own view (default true; docs/search.md#derived-memory).
   */
  readonly deriveMemory?: boolean | undefined
}

/** What a host sees of its session: the log's operations plus the goal tracker. */
export interface SessionMemoryApi extends SessionLog {
  /** The session's GoalTracker and ProgressLedger, each command persisted before it returns. */
  readonly goals: GoalTracking
  /** Matrix orchestration state: every mutation is appended and flushed before it returns. */
  readonly matrix: MatrixCoordinator
  /**
   * Writes the host's session memory view (`derived/memory.json`): stamped, atomic, nothing
   * written when equivalent; a host-written view is never replaced by a derived one.
   */
  readonly writeMemoryView: (
    view: SessionMemoryView
  ) => Effect.Effect<MemoryViewWriteResult, StoreIoError | CreateDirError>
}

/** The host-facing session: the event log's operations for the lifetime of the layer. */
export class SessionMemory
  extends Context.Service<SessionMemory, SessionMemoryApi>()("@logbook/runtime/SessionMemory")
{
  /**
   * Opens the session on acquire; on release flushes, completes, releases the lock and applies
   * retention (preserving this session). Needs one `SessionRegistry` and `SessionFs` per process.
   *
   * Derived files never block the canonical log: an unreadable `derived/goal.json` does not fail
   * the layer; `goals` then reports it as a typed error when used. On release, after `complete`,
   * the memory view is derived from the log unless the host wrote its own (`deriveMemory`).
   *
   * **Gotchas**: release errors cannot reach the host (the scope is closing); they are logged.
   * Call `flush` before leaving the scope when you need to know the last events are durable.
   */
  static readonly layer = (
    options: SessionMemoryOptions
  ): Layer.Layer<SessionMemory, OpenError, SessionRegistry | SessionFs | Retention> =>
    Layer.effect(
      SessionMemory,
      Effect.gen(function*() {
        const sessionsDir = options.sessionsDir ?? defaultSessionsDir(options.workspace)
        const retention = yield* Retention
        const policy = options.retention ?? DEFAULT_RETENTION_POLICY
        // Registered first so it runs last: after the log's own release dropped the lock.
        if (policy !== false) {
          yield* Effect.addFinalizer(() =>
            retention.apply(sessionsDir, policy, { preserve: options.sessionId }).pipe(
              Effect.catch((error) =>
                Effect.logWarning(`retention after closing ${options.sessionId} failed: ${error.message}`)
              )
            )
          )
        }
        const log = yield* EventLog.open({
          sessionsDir,
          sessionId: options.sessionId,
          maxEvents: options.maxEvents,
          maxBytes: options.maxBytes,
          summaryHook: options.summaryHook,
          autoFlush: options.autoFlush,
          requireExclusive: options.requireExclusive
        })
        // Registered before `complete` so it runs after it: the log is flushed when it is read.
        if (options.deriveMemory !== false) {
          yield* Effect.addFinalizer(() =>
            deriveSessionMemory(sessionsDir, options.sessionId).pipe(
              Effect.catch((error) =>
                Effect.logWarning(`deriving the memory view of ${options.sessionId} failed: ${error.message}`)
              )
            )
          )
        }
        yield* Effect.addFinalizer(() =>
          log.complete.pipe(
            Effect.catch((error) => Effect.logWarning(`closing ${options.sessionId} failed: ${error.message}`))
          )
        )
        const goals = yield* makeGoalTracking(log.paths)
        const matrix = yield* makeMatrixCoordinator(log)
        const fs = yield* SessionFs
        const writeView = (view: SessionMemoryView) =>
          Effect.provideService(writeMemoryView(sessionsDir, options.sessionId, view), SessionFs, fs)
        return SessionMemory.of({ ...log, goals, matrix, writeMemoryView: writeView })
      })
    )

  /** The same layer with the Node file system, a registry and retention provided (one session per process). */
  static readonly layerNode = (options: SessionMemoryOptions): Layer.Layer<SessionMemory, OpenError> =>
    SessionMemory.layer(options).pipe(Layer.provide(storeLayerNode))
}

/**
 * Node implementations of the store services: file system, session registry, retention and the
 * manifest cache (one of each per layer: nothing is shared between two hosts of a process).
 */
export const storeLayerNode: Layer.Layer<SessionFs | SessionRegistry | Retention | ManifestCache> = Layer.mergeAll(
  SessionRegistry.layer,
  Retention.layer,
  ManifestCache.layer
).pipe(Layer.provideMerge(SessionFs.layerNode))
