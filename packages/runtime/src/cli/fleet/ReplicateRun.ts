/**
 * The work of `logbook replicate`, loaded only when that command runs (it pulls in the fleet
 * client): resolve the target, run the migrations, replicate one pass (or pass after pass with
 * `--watch`), retry with backoff when the connection drops, report progress and conflicts on
 * stderr and the result on stdout.
 */
import type { FleetTarget, ReplicateOptions, ReplicationProgress, ReplicationReport } from "@logbook/fleet"
import {
  FleetError,
  fleetTargetFromConfig,
  isRetryableReplicationError,
  layerFleetClient,
  makeReplicationMemo,
  migrateFleet,
  replicateStore,
  replicationRetrySchedule,
  sqlDefectsAsFailures,
  toFleetError
} from "@logbook/fleet"
import { Clock, Duration, Effect, Option, Stdio } from "effect"
import type { Redacted } from "effect"
import * as NodeOs from "node:os"
import { ReplicationConflicts } from "../Errors.ts"
import { formatBytes, note, printJson, printLines } from "../Output.ts"

/** What the command was asked. */
export interface ReplicateInput {
  readonly sessionsDir: string
  readonly db: Option.Option<Redacted.Redacted<string>>
  readonly session: string | undefined
  readonly watch: boolean
  readonly json: boolean
  readonly batchLines: number | undefined
}

const OPERATION = "replicate"
/** Attempts of a single pass before a lost connection is reported (the watch mode never gives up). */
const PASS_ATTEMPTS = 8
const PROGRESS_EVERY_MS = 1000
const WATCH_INTERVAL = Duration.seconds(1)

/** A failure worth another attempt: a lost or refused connection, or a migration lock held by another run. */
const retryable = (error: unknown): boolean =>
  isRetryableReplicationError(error) ||
  (error instanceof FleetError && error.operation === "connect") ||
  (typeof error === "object" && error !== null && "_tag" in error && error._tag === "MigrationError" &&
    "kind" in error && error.kind === "Locked")

/** SQL and migration failures as `FleetError`s naming only the redacted target. */
const asFleetError = (target: FleetTarget) => <E extends { readonly _tag: string }>(error: E) =>
  error._tag === "SqlError" || error._tag === "MigrationError"
    ? toFleetError(target, OPERATION)(error as unknown as Error)
    : error as Exclude<E, { readonly _tag: "SqlError" | "MigrationError" }>

/** One pass over a fresh client: migrations, then replication. */
const pass = (target: FleetTarget, sessionsDir: string, options: ReplicateOptions) =>
  Effect.gen(function*() {
    yield* migrateFleet
    return yield* replicateStore(sessionsDir, options)
  }).pipe(
    Effect.provide(layerFleetClient(target, { maxConnections: 1 })),
    // A connection closed mid-query can reach here as a defect carrying a SqlError: retry it too.
    sqlDefectsAsFailures
  )

const reportJson = (report: ReplicationReport, target: FleetTarget) => ({
  fleet: target.display,
  sessions_dir: report.sessionsDir,
  inserted: report.inserted,
  skipped: report.skipped,
  bytes: report.bytes,
  sessions: report.sessions.map((s) => ({
    session_id: s.session,
    epoch: s.epoch,
    offset: s.offset,
    inserted: s.inserted,
    skipped: s.skipped,
    epochs_started: s.epochsStarted,
    files_written: s.filesWritten,
    files_removed: s.filesRemoved,
    conflict: s.conflict === undefined ? null : {
      epoch: s.conflict.epoch,
      offset: s.conflict.offset,
      stored_sha256: s.conflict.storedSha256,
      local_sha256: s.conflict.localSha256
    }
  }))
})

/** Runs `logbook replicate`. */
export const runReplicate = Effect.fn("cli.replicate.run")(function*(input: ReplicateInput) {
  const target = yield* fleetTargetFromConfig(OPERATION, input.db)
  const stdio = yield* Stdio.Stdio
  const say = (line: string) => note(line).pipe(Effect.provideService(Stdio.Stdio, stdio), Effect.ignore)
  let lastProgress = 0
  const onProgress = (p: ReplicationProgress) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now - lastProgress < PROGRESS_EVERY_MS && p.offset < p.size) return
      lastProgress = now
      yield* say(
        `replicate: ${p.session} epoch ${p.epoch}: ${formatBytes(p.offset)} of ${formatBytes(p.size)} replicated`
      )
    })
  const options: ReplicateOptions = {
    originHost: NodeOs.hostname(),
    session: input.session,
    maxBatchLines: input.batchLines,
    onProgress,
    onConflict: (c) => say(`logbook: ${c.message}`),
    memo: makeReplicationMemo()
  }
  const retried = <A, E, R>(effect: Effect.Effect<A, E, R>, times: number | undefined) =>
    effect.pipe(
      Effect.tapError((e) =>
        retryable(e)
          ? note(
            `replicate: connection to ${target.display} lost, retrying: ${e instanceof Error ? e.message : String(e)}`
          ).pipe(Effect.ignore)
          : Effect.void
      ),
      Effect.retry({
        schedule: replicationRetrySchedule,
        while: retryable,
        ...(times === undefined ? {} : { times })
      })
    )
  if (!input.watch) {
    const report = yield* retried(pass(target, input.sessionsDir, options), PASS_ATTEMPTS).pipe(
      Effect.mapError(asFleetError(target))
    )
    if (input.json) {
      yield* printJson(reportJson(report, target))
    } else {
      yield* printLines(
        `Replicated ${report.inserted} line(s) (${
          formatBytes(report.bytes)
        }) of ${report.sessions.length} session(s) ` +
          `to ${target.display}` + (report.skipped > 0 ? `; ${report.skipped} already there` : "")
      )
    }
    if (report.conflicts.length > 0) {
      return yield* new ReplicationConflicts({
        count: report.conflicts.length,
        sessions: report.conflicts.map((c) => c.session)
      })
    }
    return
  }
  yield* note(`replicate: watching ${input.sessionsDir} → ${target.display} (Ctrl-C to stop)`)
  // One client for the whole watch; a lost connection rebuilds it (after backoff) and goes on.
  const watchLoop = Effect.gen(function*() {
    yield* migrateFleet
    return yield* Effect.forever(Effect.gen(function*() {
      const report = yield* replicateStore(input.sessionsDir, options)
      if (report.inserted > 0) {
        yield* say(`replicate: ${report.inserted} new line(s) from ${report.sessions.length} session(s)`)
      }
      yield* Effect.sleep(WATCH_INTERVAL)
    }))
  }).pipe(
    Effect.provide(layerFleetClient(target, { maxConnections: 1 })),
    sqlDefectsAsFailures
  )
  return yield* retried(watchLoop, undefined).pipe(Effect.mapError(asFleetError(target)))
})
