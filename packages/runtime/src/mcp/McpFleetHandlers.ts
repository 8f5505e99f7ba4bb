/**
 * What each `logbook mcp --db` tool does: the same tools, arguments, budgets, cursors and result
 * shapes as over a store (McpHandlers.ts, which checks the arguments and cuts the pages), read
 * from a fleet (docs/fleet.md) instead of a sessions root: `searchFleet` for `search`, the
 * replicated manifests, turn indexes and derived files for `list_sessions`, `show_session`,
 * `facts` and `goal_progress`, and the latest epoch's lines for `read_turn`, `explain_session`
 * and `evidence`. A citation is the line's byte offset and SHA-256 (with its newline), as in a
 * store, so a citation taken from a session's directory is accepted by the fleet's `evidence`
 * and the other way round. Read-only: nothing is written to the fleet.
 */
import type { GoalSnapshot, ProgressLedger } from "@logbook/domain"
import {
  decodeGoalSnapshotText,
  decodeMemoryViewText,
  decodeProgressText,
  readMemoryFactsText,
  redactJson,
  redactSecrets
} from "@logbook/domain"
import type { FleetTarget } from "@logbook/fleet"
import {
  explainFleetSession,
  findFleetSession,
  fleetLineAt,
  fleetLogLines,
  fleetSmallFile,
  fleetTargetFromConfig,
  inspectFleetSession,
  layerFleetClient,
  listFleetSessions,
  readFleetTurn,
  searchFleet
} from "@logbook/fleet"
import { EvidenceUnavailable, pageUtf8 } from "@logbook/projections"
import { sha256Hex } from "@logbook/store"
import type { Redacted } from "effect"
import { Effect, Option, Result, Stream } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import { encodeCursor, McpToolError } from "./Budget.ts"
import type {
  CitationJson,
  EvidenceArgs,
  ExplainArgs,
  FactsArgs,
  ListSessionsArgs,
  ReadTurnArgs,
  SearchArgs,
  SessionArgs,
  Span
} from "./McpHandlers.ts"
import {
  evidenceRequest,
  explainRequest,
  explainResult,
  factOffsetsOf,
  factsRequest,
  goalLine,
  goalProgressResult,
  listSessionsRequest,
  readTurnRequest,
  searchRequest,
  sessionArgument,
  showSessionResult,
  toToolError,
  turnPage
} from "./McpHandlers.ts"

const MEMORY_VIEW = "derived/memory.json"
const GOAL = "derived/goal.json"
const PROGRESS = "derived/progress.json"

const utf8 = new TextDecoder("utf-8")

/** The latest epoch of a fleet session (where its log lives); fails `FleetSessionNotFound`. */
const epochOf = (target: FleetTarget, operation: string, session: string) =>
  Effect.map(findFleetSession(target, operation, session), (row) => row.epoch)

/** The citation of the line of `session` that starts at `offset`, or null when none does. */
const citeFleetLine = (target: FleetTarget, session: string, epoch: number | undefined, offset: number) =>
  Effect.map(
    fleetLineAt(target, "mcp.cite", session, epoch, offset),
    (line): CitationJson | null => line === undefined ? null : { session, offset, digest: sha256Hex(line.bytes) }
  )

/** A replicated JSON file of a session decoded; none when it was not replicated, a tool error when it is corrupt. */
const replicatedFile = <A>(
  target: FleetTarget,
  session: string,
  path: string,
  decode: (text: string) => Result.Result<A, unknown>
) =>
  Effect.gen(function*() {
    const bytes = yield* fleetSmallFile(target, "mcp.read", session, path)
    if (bytes === undefined) return Option.none<A>()
    const decoded = decode(utf8.decode(bytes))
    if (Result.isFailure(decoded)) {
      return yield* new McpToolError({
        message: `the replicated ${path} of session ${session} is corrupt (the log itself is unaffected and the ` +
          "other tools still read it)"
      })
    }
    return Option.some(decoded.success)
  })

/** The fleet `--db` names (else `LOGBOOK_DATABASE_URL`); a usage error when neither does. */
export const fleetTarget = (db: Option.Option<Redacted.Redacted<string>>) => fleetTargetFromConfig("mcp", db)

/** The fleet's client for the server: one connection, since the server answers one request after another. */
export const fleetClient = (target: FleetTarget) => layerFleetClient(target, { maxConnections: 1 })

/** The fleet's tools over `target`: each has the signature of its store counterpart minus the sessions root. */
export const fleetHandlers = (target: FleetTarget) => {
  const search = Effect.fn("McpFleet.search")(function*(args: SearchArgs) {
    const request = yield* searchRequest(args)
    if (request.session !== undefined) yield* findFleetSession(target, "mcp.search", request.session)
    const results = yield* searchFleet(request.query, {
      scope: request.scope,
      maxResults: request.maxResults,
      minScore: request.minScore,
      now: request.now
    })
    const page = request.page(results)
    const epochs = new Map<string, number | undefined>()
    const factOffsets = new Map<string, Map<string, number>>()
    const hits = []
    for (const { hit, ...row } of page.items) {
      const citation = yield* Effect.gen(function*() {
        if (!epochs.has(row.session)) epochs.set(row.session, yield* epochOf(target, "mcp.search", row.session))
        let offset = hit.offset
        if (offset === undefined) {
          let offsets = factOffsets.get(row.session)
          if (offsets === undefined) {
            offsets = factOffsetsOf(yield* fleetSmallFile(target, "mcp.search", row.session, MEMORY_VIEW))
            factOffsets.set(row.session, offsets)
          }
          offset = offsets.get(hit.snippet)
        }
        return offset === undefined ? null : yield* citeFleetLine(target, row.session, epochs.get(row.session), offset)
      }).pipe(Effect.orElseSucceed(() => null))
      hits.push({ ...row, citation })
    }
    return { hits, cursor: request.cursorAfter(page.next) }
  }, Effect.mapError(toToolError))

  const list_sessions = Effect.fn("McpFleet.listSessions")(function*(args: ListSessionsArgs) {
    const request = yield* listSessionsRequest(args)
    const listing = yield* listFleetSessions(target, { limit: request.unfiltered ? request.limit : undefined })
    const page = request.page(listing.sessions)
    const sessions = yield* Effect.forEach(
      page.items,
      (row) =>
        Effect.gen(function*() {
          const goal = yield* replicatedFile(target, row.session_id, GOAL, decodeGoalSnapshotText)
          if (Option.isSome(goal)) return goalLine(goal, null)
          const view = yield* replicatedFile(target, row.session_id, MEMORY_VIEW, decodeMemoryViewText)
          return goalLine(goal, Option.isSome(view) ? view.value.objective : null)
        }).pipe(
          Effect.orElseSucceed(() => null),
          Effect.map((goal) => ({ ...row, goal }))
        )
    )
    return { sessions, cursor: request.cursorAfter(page.next) }
  }, Effect.mapError(toToolError))

  const show_session = Effect.fn("McpFleet.showSession")(function*(args: SessionArgs) {
    const session = yield* sessionArgument(args.session)
    const view = yield* inspectFleetSession(target, session)
    const model = yield* explainFleetSession(target, session, "session")
    return yield* showSessionResult(
      args,
      view.inspection,
      model,
      (offset) => citeFleetLine(target, session, view.row.epoch, offset)
    )
  }, Effect.mapError(toToolError))

  const read_turn = Effect.fn("McpFleet.readTurn")(function*(args: ReadTurnArgs) {
    const request = yield* readTurnRequest(args)
    const found = yield* readFleetTurn(target, request.session, request.turn)
    // The page's lines are read again (one page of rows) for their digests.
    const cite = (spans: ReadonlyArray<Span>) =>
      Effect.gen(function*() {
        const first = spans[0]
        const last = spans[spans.length - 1]
        if (first === undefined || last === undefined) return []
        const digests = new Map<number, string>()
        yield* fleetLogLines(target, "mcp.cite", found.view.row.sessionId, found.view.row.epoch, first.offset).pipe(
          Stream.takeWhile((line) => line.offset <= last.offset),
          Stream.runForEach((line) => Effect.sync(() => digests.set(line.offset, sha256Hex(line.bytes))))
        )
        return spans.map((span): CitationJson | null => {
          const digest = digests.get(span.offset)
          return digest === undefined ? null : { session: request.session, offset: span.offset, digest }
        })
      })
    return yield* turnPage(request, found.records, cite)
  }, Effect.mapError(toToolError))

  const explain_session = Effect.fn("McpFleet.explainSession")(function*(args: ExplainArgs) {
    const request = yield* explainRequest(args)
    const model = yield* explainFleetSession(target, request.session, request.scope)
    return explainResult(request, model)
  }, Effect.mapError(toToolError))

  const evidence = Effect.fn("McpFleet.evidence")(function*(args: EvidenceArgs) {
    const request = yield* evidenceRequest(args)
    const { key, limit, offset, session, start } = request
    const epoch = yield* epochOf(target, "mcp.evidence", session)
    const unavailable = (reason: string) => new EvidenceUnavailable({ session, offset, reason })
    const line = yield* fleetLineAt(target, "mcp.evidence", session, epoch, offset)
    if (line === undefined) return yield* unavailable("no retained line starts there")
    const digest = sha256Hex(line.bytes)
    if (digest !== request.digest) return yield* unavailable("the digest differs")
    const parsed = Result.try((): unknown => JSON.parse(utf8.decode(line.bytes)))
    if (Result.isFailure(parsed)) return yield* unavailable("the line is not JSON")
    const text = new TextEncoder().encode(JSON.stringify(redactJson(parsed.success), null, 2))
    const page = pageUtf8(text, start, limit)
    if (Result.isFailure(page)) return yield* page.failure
    const { end, start: from } = page.success
    return {
      citation: { session, offset, digest },
      text: redactSecrets(utf8.decode(text.subarray(from, end))),
      total_chars: text.length,
      cursor: end < text.length ? encodeCursor({ tool: "evidence", key, at: end }) : null
    }
  }, Effect.mapError(toToolError))

  const facts = Effect.fn("McpFleet.facts")(function*(args: FactsArgs) {
    const request = yield* factsRequest(args)
    const sql = yield* SqlClient.SqlClient
    // As `queryFacts` reads a store: sessions in name order, each view's facts in order, up to the limit.
    const names = request.session === undefined
      ? (yield* sql<{ readonly session_id: string }>`select session_id from sessions order by session_id collate "C"`
        .pipe(
          Effect.mapError(toToolError)
        )).map((r) => r.session_id)
      : [(yield* findFleetSession(target, "mcp.facts", request.session)).sessionId]
    const all: Array<{ readonly session_id: string; readonly fact: string }> = []
    const views = new Map<string, Uint8Array | undefined>()
    for (const name of names) {
      if (all.length >= request.limit) break
      const bytes = yield* fleetSmallFile(target, "mcp.facts", name, MEMORY_VIEW)
      views.set(name, bytes)
      if (bytes === undefined) continue
      const read = readMemoryFactsText(utf8.decode(bytes))
      if (Result.isFailure(read)) continue
      for (const fact of read.success.facts) {
        if (all.length >= request.limit) break
        if (fact !== undefined) all.push({ fact: redactSecrets(fact), session_id: name })
      }
    }
    const page = request.page(all)
    const offsets = new Map<string, { readonly epoch: number | undefined; readonly offsets: Map<string, number> }>()
    const out = []
    for (const row of page.items) {
      let known = offsets.get(row.session)
      if (known === undefined) {
        known = {
          epoch: yield* epochOf(target, "mcp.facts", row.session),
          offsets: factOffsetsOf(views.get(row.session))
        }
        offsets.set(row.session, known)
      }
      const offset = known.offsets.get(row.fact)
      const citation = offset === undefined ? null : yield* citeFleetLine(target, row.session, known.epoch, offset)
      out.push({ ...row, citation })
    }
    return { facts: out, cursor: request.cursorAfter(page.next) }
  }, Effect.mapError(toToolError))

  const goal_progress = Effect.fn("McpFleet.goalProgress")(function*(args: SessionArgs) {
    const session = yield* sessionArgument(args.session)
    yield* findFleetSession(target, "mcp.goal_progress", session)
    const goal: Option.Option<GoalSnapshot> = yield* replicatedFile(target, session, GOAL, decodeGoalSnapshotText)
    const progress: Option.Option<ProgressLedger> = yield* replicatedFile(target, session, PROGRESS, decodeProgressText)
    return yield* goalProgressResult(args, goal, progress)
  }, Effect.mapError(toToolError))

  return { search, list_sessions, show_session, read_turn, explain_session, evidence, facts, goal_progress }
}
