/**
 * What the `logbook fleet sessions|show|pack verify|restore` commands do once parsed: connect to
 * the fleet named by `--db` or `LOGBOOK_DATABASE_URL` (never printed), run the query, and print
 * the same shapes as the local `sessions`, `show` and `pack verify` (plus where each session came
 * from). Loaded by `Fleet.ts` only when a fleet command runs, so the PostgreSQL driver costs
 * nothing to the local commands.
 */
import type { FleetTarget } from "@logbook/fleet"
import {
  fleetTargetFromConfig,
  inspectFleetSession,
  layerFleetClient,
  listFleetSessions,
  restoreFleetSession,
  verifyFleetPack
} from "@logbook/fleet"
import { parsePublicSigningKey } from "@logbook/projections"
import { Effect, Option } from "effect"
import type { Redacted } from "effect"
import { PackNotVerified } from "../Errors.ts"
import { note, printAll, printJson, printLines, withProgress } from "../Output.ts"
import { problemCount, readKeyFile, readPackFile, verificationJson, verificationText } from "../packs/Pack.ts"
import { location } from "../Root.ts"
import { sessionJson, sessionsTable } from "../session/Sessions.ts"
import type { ShowView } from "../session/Show.ts"
import { showJson, showText } from "../session/Show.ts"

/** Runs `f` with a one-connection client of the fleet (queries run one after another). */
const withFleet = <A, E, R>(target: FleetTarget, effect: Effect.Effect<A, E, R>) =>
  Effect.provide(effect, layerFleetClient(target, { maxConnections: 1 }))

/** `fleet sessions [--limit N] [--json]`. */
export const fleetSessions = Effect.fn("cli.fleet.sessions")(function*(args: {
  readonly db: Option.Option<Redacted.Redacted<string>>
  readonly limit: Option.Option<number>
  readonly json: boolean
}) {
  const target = yield* fleetTargetFromConfig("fleet.sessions", args.db)
  const listing = yield* withFleet(target, listFleetSessions(target, { limit: Option.getOrUndefined(args.limit) }))
  if (args.json) {
    yield* printJson(listing.sessions.map((s) => ({ ...sessionJson(s), origin_host: s.originHost })))
  } else if (listing.sessions.length === 0) {
    yield* printLines(`No sessions in the fleet ${listing.target}. Replicate a store with \`logbook replicate\`.`)
  } else {
    yield* printAll(sessionsTable(listing.sessions, [{ header: "ORIGIN", cell: (s) => s.originHost }]))
  }
  if (listing.unreadable.length > 0) {
    yield* note(
      `note: skipped ${listing.unreadable.length} session${
        listing.unreadable.length === 1 ? "" : "s"
      } without a readable replicated manifest.json (${listing.unreadable.join(", ")})`
    )
  }
})

/** `fleet show <session> [--json]`. */
export const fleetShow = Effect.fn("cli.fleet.show")(function*(args: {
  readonly db: Option.Option<Redacted.Redacted<string>>
  readonly session: string
  readonly json: boolean
}) {
  const target = yield* fleetTargetFromConfig("fleet.show", args.db)
  const fleet = yield* withProgress(
    `rescanning ${args.session} in the fleet`,
    (onProgress) => withFleet(target, inspectFleetSession(target, args.session, { onProgress }))
  )
  const view: ShowView = { inspection: fleet.inspection, dir: null, pinned: fleet.pinned, usage: fleet.usage }
  if (args.json) {
    return yield* printJson({ ...showJson(view), origin_host: fleet.row.originHost, fleet: target.display })
  }
  yield* printAll(
    showText(
      view,
      `none on this machine (\`logbook fleet restore ${fleet.row.sessionId}\` recreates it)`,
      [`Origin        ${fleet.row.originHost} (replicated to the fleet ${target.display})`]
    )
  )
})

/** `fleet pack verify <session> [--pack FILE] [--verify-key FILE] [--json]`. */
export const fleetPackVerify = Effect.fn("cli.fleet.pack.verify")(function*(args: {
  readonly db: Option.Option<Redacted.Redacted<string>>
  readonly session: string
  readonly pack: Option.Option<string>
  readonly verifyKey: Option.Option<string>
  readonly json: boolean
}) {
  const publicKey = Option.isSome(args.verifyKey)
    ? Option.some(yield* parsePublicSigningKey(yield* readKeyFile(args.verifyKey.value), args.verifyKey.value))
    : Option.none()
  // An auditor's own copy is read (and checked to be a pack) before the fleet is asked anything.
  const given = Option.isSome(args.pack) ? Option.some(yield* readPackFile(args.pack.value)) : Option.none()
  const target = yield* fleetTargetFromConfig("fleet.pack.verify", args.db)
  const { pack, packPath, result, row } = yield* withFleet(
    target,
    verifyFleetPack(target, args.session, {
      ...(Option.isSome(publicKey) ? { publicKey: publicKey.value } : {}),
      ...(Option.isSome(given) ? { pack: given.value } : {})
    })
  )
  const keyGiven = Option.isSome(publicKey)
  if (args.json) {
    yield* printJson({ ...verificationJson(row.sessionId, packPath, result), origin_host: row.originHost })
  } else {
    yield* printAll(verificationText(packPath, pack, result, keyGiven))
  }
  if (!result.verified) {
    return yield* new PackNotVerified({ session: row.sessionId, pack: packPath, count: problemCount(result, keyGiven) })
  }
})

/** `fleet restore <session> [--json]` (into `--sessions-dir` / the workspace's store). */
export const fleetRestore = Effect.fn("cli.fleet.restore")(function*(args: {
  readonly db: Option.Option<Redacted.Redacted<string>>
  readonly session: string
  readonly json: boolean
}) {
  const where = yield* location
  const target = yield* fleetTargetFromConfig("fleet.restore", args.db)
  const restored = yield* withFleet(target, restoreFleetSession(target, args.session, where.sessionsDir))
  if (args.json) {
    return yield* printJson({
      session_id: restored.row.sessionId,
      origin_host: restored.row.originHost,
      dir: restored.dir,
      files: restored.files,
      bytes: restored.bytes,
      lines: restored.lines
    })
  }
  yield* printLines(
    `Restored session ${restored.row.sessionId} (from ${restored.row.originHost}, via the fleet ${target.display}) ` +
      `into ${restored.dir}: ${restored.files} files, ${restored.bytes} bytes, ${restored.lines} lines of events.jsonl`
  )
})
