/**
 * What each `logbook mcp` tool does: the same readers the CLI commands use (`searchMemory`,
 * `recentSessions`, `inspectSession`, `readTurn`, `queryExplanation`, `queryEvidence`,
 * `queryFacts`, the goal and progress files), each result redacted (docs/security.md), cut at
 * its budget with a cursor, and every failure turned into a tool error whose message says what
 * to change. Nothing here writes to the store (the search index snapshot aside, as `search` does).
 */
import type { ExplanationModel, GoalSnapshot, ProgressLedger } from "@logbook/domain"
import { encodeEventForDisplay, redactJson, redactSecrets } from "@logbook/domain"
import type { InspectedSession, LogRecord, MemorySearchResult, SessionSummary } from "@logbook/projections"
import {
  findSession,
  inspectSession,
  queryEvidence,
  queryExplanation,
  queryFacts,
  readTurn,
  recentSessions,
  renderSummary,
  searchMemory
} from "@logbook/projections"
import type { SessionPaths } from "@logbook/store"
import {
  loadGoalSnapshot,
  loadProgress,
  memoryViewPath,
  readStoredMemoryView,
  SessionFs,
  sha256Hex
} from "@logbook/store"
import { Effect, Option, Result, Stream } from "effect"
import {
  budgetChars,
  decodeCursor,
  encodeCursor,
  intArgument,
  jsonSize,
  McpToolError,
  pageItems,
  pageText,
  trimText
} from "./Budget.ts"
import { renderEvent } from "./EventText.ts"

/** A citation as the tools return it. */
export interface CitationJson {
  readonly session: string
  readonly offset: number
  readonly digest: string
}

/** Longest line a citation is computed for (a longer line is cited as unavailable: null). */
const MAX_CITED_LINE = 4 * 1024 * 1024

const decoder = new TextDecoder("utf-8")

/** Characters a page's own fields (ids, cursor) take of its budget, beside its items. */
export const PAGE_OVERHEAD = 400

/** Characters an item's citation takes beside its own JSON. */
export const CITATION_SIZE = 170

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/** What an agent can do next, by the tag of a reader's error (the errors' own messages say what happened). */
const NEXT_STEP: Readonly<Record<string, string>> = {
  SessionNotFound: "list_sessions names the sessions of this store",
  TurnNotFound: "show_session lists the session's retained turns",
  TurnEvicted: "the event cap removed it; show_session lists the retained turns",
  EvidenceUnavailable: "the line changed or was evicted; search again for a fresh citation",
  CorruptFile: "the derived file is damaged; the log itself is unaffected and the other tools still read it"
}

const messageOf = (error: unknown): string => {
  const message = error instanceof Error && error.message !== "" ? error.message : String(error)
  const tag = isRecord(error) ? str(error["_tag"]) : undefined
  const hint = (isRecord(error) ? str(error["hint"]) : undefined) ?? (tag === undefined ? undefined : NEXT_STEP[tag])
  return hint === undefined ? message : `${message} (${hint})`
}

/** Any failure of a reader as a tool error with its (redacted) message. */
export const toToolError = (error: unknown): McpToolError =>
  error instanceof McpToolError ? error : new McpToolError({ message: redactSecrets(messageOf(error)) })

/** The agents whose imported sessions are named `<agent>-<id>` (docs/import.md). */
const IMPORTED_AGENTS = ["codex", "claude", "gemini", "copilot", "cline", "roo", "cursor", "aider", "opencode"] as const

/** The agent of a session by its name: the importer's prefix, or none for a session a host recorded. */
export const agentOf = (session: string): string | null =>
  IMPORTED_AGENTS.find((agent) => session.startsWith(`${agent}-`)) ?? null

/**
 * A session id as an argument: the directory name `list_sessions` returns. A path-shaped or
 * dot-prefixed id is refused before any file is touched.
 */
export const sessionArgument = (id: string): Effect.Effect<string, McpToolError> =>
  id.length === 0 || id.length > 255 || id.startsWith(".") || /[/\\\u0000]/u.test(id)
    ? Effect.fail(
      new McpToolError({
        message: `invalid session id ${JSON.stringify(id.slice(0, 80))}: a session id is a directory name ` +
          "of the sessions root (no path separators, not starting with a dot); list_sessions returns them"
      })
    )
    : Effect.succeed(id)

const located = (sessionsDir: string, id: string) =>
  Effect.flatMap(sessionArgument(id), (session) => findSession(sessionsDir, session))

/**
 * The citation of the line that starts at `offset` of `eventsPath`: its SHA-256 with the
 * newline, as `evidence` checks it; none when no terminated line starts there.
 */
export const citeLine = Effect.fn("Mcp.citeLine")(function*(session: string, eventsPath: string, offset: number) {
  const fs = yield* SessionFs
  const info = yield* fs.lstat(eventsPath)
  const size = Option.isSome(info) && info.value.type === "File" ? info.value.size : 0
  if (!Number.isSafeInteger(offset) || offset < 0 || offset >= size) return null
  let end = Math.min(size, offset + 4096)
  let bytes = yield* fs.readRange(eventsPath, offset, end)
  while (bytes.indexOf(10) === -1 && end < size && bytes.length < MAX_CITED_LINE) {
    end = Math.min(size, offset + bytes.length * 4)
    bytes = yield* fs.readRange(eventsPath, offset, end)
  }
  const nl = bytes.indexOf(10)
  if (nl === -1) return null
  return { session, offset, digest: sha256Hex(bytes.subarray(0, nl + 1)) } satisfies CitationJson
})

/** Longest byte range {@link citeSpans} reads at once; a wider page cites line by line. */
const MAX_SPAN_READ = 8 * 1024 * 1024

/**
 * The citations of known line spans (offset and length, newline included, as the event stream
 * gives them) of one log, with one read of the range they cover.
 */
export const citeSpans = Effect.fn("Mcp.citeSpans")(
  function*(
    session: string,
    eventsPath: string,
    spans: ReadonlyArray<{ readonly offset: number; readonly length: number }>
  ) {
    const first = spans[0]
    const last = spans[spans.length - 1]
    if (first === undefined || last === undefined) return []
    const start = first.offset
    const end = last.offset + last.length
    if (end - start > MAX_SPAN_READ) {
      return yield* Effect.forEach(spans, (span) => citeLine(session, eventsPath, span.offset))
    }
    const fs = yield* SessionFs
    const bytes = yield* fs.readRange(eventsPath, start, end)
    return spans.map((span): CitationJson | null => {
      const line = bytes.subarray(span.offset - start, span.offset - start + span.length)
      return line.length === span.length && line[line.length - 1] === 10
        ? { session, offset: span.offset, digest: sha256Hex(line) }
        : null
    })
  }
)

const OFFSET_IN_SOURCE = /events\.jsonl@(\d+)/u

/** The byte offsets of a session's facts, by fact text, from its `derived/memory.json` bytes (sources `events.jsonl@N`). */
export const factOffsetsOf = (bytes: Uint8Array | undefined): Map<string, number> => {
  const out = new Map<string, number>()
  if (bytes === undefined) return out
  const parsed = Result.try((): unknown => JSON.parse(decoder.decode(bytes)))
  if (Result.isFailure(parsed) || !isRecord(parsed.success)) return out
  const facts = parsed.success["grounded_facts"]
  if (!Array.isArray(facts)) return out
  for (const entry of facts) {
    if (!isRecord(entry)) continue
    const fact = str(entry["fact"])
    const offset = OFFSET_IN_SOURCE.exec(str(entry["source"]) ?? "")?.[1]
    if (fact !== undefined && offset !== undefined && !out.has(fact)) out.set(fact, Number(offset))
    const redacted = fact === undefined ? undefined : redactSecrets(fact)
    if (redacted !== undefined && offset !== undefined && !out.has(redacted)) out.set(redacted, Number(offset))
  }
  return out
}

const factOffsets = Effect.fn("Mcp.factOffsets")(function*(paths: SessionPaths) {
  const fs = yield* SessionFs
  const bytes = yield* fs.readFileNoFollow(memoryViewPath(paths))
  return factOffsetsOf(Option.getOrUndefined(bytes))
})

/** The arguments of `search`. */
export interface SearchArgs {
  readonly query: string
  readonly scope?: "facts" | "history" | undefined
  readonly limit?: number | undefined
  readonly session?: string | undefined
  readonly min_score?: number | undefined
  readonly now?: number | undefined
  readonly since?: number | undefined
  readonly until?: number | undefined
  readonly agent?: string | undefined
  readonly max_tokens?: number | undefined
  readonly cursor?: string | undefined
}

const hitCitation = (sessionsDir: string, hit: MemorySearchResult, offsets: Map<string, number> | undefined) =>
  Effect.gen(function*() {
    const paths = yield* findSession(sessionsDir, hit.session)
    const offset = hit.offset ?? offsets?.get(hit.snippet)
    return offset === undefined ? null : yield* citeLine(hit.session, paths.events, offset)
  }).pipe(Effect.orElseSucceed(() => null))

/** One page of search hits before their citations: the rows and where the next page starts. */
export interface SearchPage {
  readonly items: ReadonlyArray<{
    readonly session: string
    readonly turn: number | null
    readonly chunk_id: string
    readonly score: number
    readonly snippet: string
    readonly hit: MemorySearchResult
  }>
  readonly next: number | undefined
}

/**
 * A `search` call's arguments checked (shared by the store's and the fleet's `search`): the
 * options to rank with, and `page`, which filters, trims and pages the ranked results, and
 * `cursorAfter`, the cursor of the page that follows.
 */
export const searchRequest = Effect.fn("Mcp.searchRequest")(function*(args: SearchArgs) {
  const budget = yield* budgetChars(args.max_tokens)
  const limit = yield* intArgument("limit", args.limit, 6, 1, 100)
  const scope = args.scope ?? "facts"
  const session = args.session === undefined ? undefined : yield* sessionArgument(args.session)
  for (const [name, value] of [["now", args.now], ["since", args.since], ["until", args.until]] as const) {
    if (value !== undefined) yield* intArgument(name, value, 0, 0, 253_402_300_799)
  }
  const minScore = args.min_score ?? 0
  if (!Number.isFinite(minScore)) {
    return yield* new McpToolError({ message: `min_score must be a finite number, got ${minScore}` })
  }
  const key = JSON.stringify([
    args.query,
    scope,
    limit,
    session ?? null,
    minScore,
    args.since ?? null,
    args.until ?? null,
    args.agent ?? null
  ])
  const cursor = yield* decodeCursor("search", key, args.cursor)
  // The ranking time is fixed by the first page, so later pages continue the same ranking.
  const clockNow = Math.floor((yield* Effect.clockWith((c) => c.currentTimeMillis)) / 1000)
  const now = cursor?.now ?? args.now ?? clockNow
  const { agent, since, until } = args
  const filtered = session !== undefined || since !== undefined || until !== undefined || agent !== undefined
  const page = (results: ReadonlyArray<MemorySearchResult>): SearchPage => {
    const kept = filtered
      ? results.filter((r) =>
        (session === undefined || r.session === session) &&
        (agent === undefined || agentOf(r.session) === agent) &&
        (since === undefined || (r.created_at !== null && r.created_at >= since)) &&
        (until === undefined || (r.created_at !== null && r.created_at < until))
      ).slice(0, limit)
      : results
    const rows = kept.map((r) => ({
      session: r.session,
      turn: r.turn ?? null,
      chunk_id: r.chunk_id,
      score: r.score,
      snippet: trimText(redactSecrets(r.snippet)),
      hit: r
    }))
    return pageItems(
      rows,
      cursor?.at ?? 0,
      budget - PAGE_OVERHEAD,
      ({ hit: _, ...row }) => jsonSize(row) + CITATION_SIZE
    )
  }
  return {
    query: args.query,
    scope,
    session,
    minScore,
    now,
    // A filter ranks over every session and keeps the matching hits.
    maxResults: filtered ? 100_000 : limit,
    page,
    cursorAfter: (next: number | undefined) =>
      next === undefined ? null : encodeCursor({ tool: "search", key, at: next, now })
  }
})

/** `search`: `searchMemory` as `logbook search --json` calls it, filtered, paged, cited. */
export const search = Effect.fn("Mcp.search")(function*(sessionsDir: string, args: SearchArgs) {
  const request = yield* searchRequest(args)
  if (request.session !== undefined) yield* findSession(sessionsDir, request.session)
  const results = yield* searchMemory(sessionsDir, request.query, {
    scope: request.scope,
    maxResults: request.maxResults,
    minScore: request.minScore,
    now: request.now
  })
  const page = request.page(results)
  const offsetsBySession = new Map<string, Map<string, number>>()
  if (request.scope === "facts") {
    for (const row of page.items) {
      if (offsetsBySession.has(row.session)) continue
      const offsets = yield* findSession(sessionsDir, row.session).pipe(
        Effect.flatMap(factOffsets),
        Effect.orElseSucceed(() => new Map<string, number>())
      )
      offsetsBySession.set(row.session, offsets)
    }
  }
  const hits = yield* Effect.forEach(
    page.items,
    ({ hit, ...row }) =>
      Effect.map(hitCitation(sessionsDir, hit, offsetsBySession.get(row.session)), (citation) => ({
        ...row,
        citation
      }))
  )
  return { hits, cursor: request.cursorAfter(page.next) }
}, Effect.mapError(toToolError))

/** The arguments of `list_sessions`. */
export interface ListSessionsArgs {
  readonly limit?: number | undefined
  readonly status?: string | undefined
  readonly agent?: string | undefined
  readonly max_tokens?: number | undefined
  readonly cursor?: string | undefined
}

/** A `list_sessions` call's arguments checked (shared by the store's and the fleet's). */
export const listSessionsRequest = Effect.fn("Mcp.listSessionsRequest")(function*(args: ListSessionsArgs) {
  const budget = yield* budgetChars(args.max_tokens)
  const limit = yield* intArgument("limit", args.limit, 20, 1, 1000)
  const key = JSON.stringify([limit, args.status ?? null, args.agent ?? null])
  const cursor = yield* decodeCursor("list_sessions", key, args.cursor)
  return {
    limit,
    /** Without a filter the listing needs only `limit` sessions. */
    unfiltered: args.status === undefined && args.agent === undefined,
    /** One page of rows of the (most recent first) summaries, filtered and cut at `limit`. */
    page: (summaries: ReadonlyArray<SessionSummary>) => {
      const rows = summaries.filter((s) =>
        (args.status === undefined || s.status === args.status) &&
        (args.agent === undefined || agentOf(s.id) === args.agent)
      ).slice(0, limit).map((s) => ({
        session_id: s.id,
        agent: agentOf(s.id),
        status: s.status,
        turn_count: s.turnCount,
        event_count: s.eventCount,
        updated_at: s.updatedAt,
        live: s.live
      }))
      return pageItems(rows, cursor?.at ?? 0, budget - PAGE_OVERHEAD, (r) => jsonSize(r) + 200)
    },
    cursorAfter: (next: number | undefined) =>
      next === undefined ? null : encodeCursor({ tool: "list_sessions", key, at: next })
  }
})

/**
 * A session's goal as `list_sessions` shows it, redacted and trimmed: the tracked goal's objective,
 * else the objective its memory view took from the log (the session's first goal, as the web app's
 * Sessions page shows it: what an imported session, which tracks no goal, was about), else null.
 */
export const goalLine = (goal: Option.Option<GoalSnapshot>, viewObjective: string | null | undefined): string | null =>
  Option.isSome(goal)
    ? trimText(redactSecrets(goal.value.objective), 200)
    : viewObjective === null || viewObjective === undefined || viewObjective.length === 0
    ? null
    : trimText(redactSecrets(viewObjective), 200)

/** `list_sessions`: `recentSessions` as `logbook sessions --json`, with each session's goal ({@link goalLine}). */
export const listSessions = Effect.fn("Mcp.listSessions")(function*(sessionsDir: string, args: ListSessionsArgs) {
  const request = yield* listSessionsRequest(args)
  const listing = yield* recentSessions(sessionsDir, { limit: request.unfiltered ? request.limit : undefined })
  const page = request.page(listing.sessions)
  const sessions = yield* Effect.forEach(page.items, (row) =>
    Effect.gen(function*() {
      const paths = yield* findSession(sessionsDir, row.session_id)
      const goal = yield* loadGoalSnapshot(paths)
      if (Option.isSome(goal)) return goalLine(goal, null)
      const stored = yield* readStoredMemoryView(paths)
      return goalLine(goal, stored._tag === "View" ? stored.view.objective : null)
    }).pipe(
      Effect.orElseSucceed(() => null),
      Effect.map((goal) => ({ ...row, goal }))
    ))
  return { sessions, cursor: request.cursorAfter(page.next) }
}, Effect.mapError(toToolError))

/** The arguments of a tool about one session. */
export interface SessionArgs {
  readonly session: string
  readonly max_tokens?: number | undefined
  readonly cursor?: string | undefined
}

/**
 * The `show_session` result of an inspected session and its whole-session explanation (goal,
 * usage, cost): one page of its turn list, each turn cited by `cite` (its first line).
 */
export const showSessionResult = <E, R>(
  args: SessionArgs,
  i: InspectedSession,
  model: ExplanationModel,
  cite: (offset: number) => Effect.Effect<CitationJson | null, E, R>
) =>
  Effect.gen(function*() {
    const budget = yield* budgetChars(args.max_tokens)
    const key = JSON.stringify([args.session])
    const cursor = yield* decodeCursor("show_session", key, args.cursor)
    const m = i.effectiveManifest
    const base = Math.max(m.retained_turn_base ?? 1, 1)
    // A turn's goal is the one its first line (`turn.started`) carried, as the explanation read it.
    const goalAt = new Map(model.goals.map((g) => [g.evidence.offset, g.label]))
    const rows = i.effectiveEntries.map((e) => {
      const label = goalAt.get(e.start_offset)
      const goal = label === undefined ? null : trimText(redactSecrets(label.replace(/\s+/gu, " ").trim()), 200)
      return {
        turn: e.turn_number,
        events: e.event_count,
        started: e.ts,
        goal,
        line: `turn ${e.turn_number}: ${e.event_count} events from byte ${e.start_offset}, started ${e.ts}${
          goal === null ? "" : ` — ${goal}`
        }`,
        offset: e.start_offset
      }
    })
    const goal = model.goals[model.goals.length - 1]
    const head = {
      session_id: i.name,
      goal: goal === undefined ? null : trimText(redactSecrets(goal.label), 400),
      usage: model.usage,
      cost_usd: model.cost_usd,
      status: m.status,
      created_at: m.created_at,
      updated_at: m.updated_at,
      turn_count: m.turn_count,
      event_count: m.event_count,
      evicted_turns: base - 1,
      open_turn: m.in_turn === true ? m.turn_count + 1 : null,
      events_bytes: i.fileLen
    }
    const page = pageItems(
      rows,
      cursor?.at ?? 0,
      budget - PAGE_OVERHEAD - jsonSize(head),
      (r) => jsonSize(r) + CITATION_SIZE
    )
    const turns = yield* Effect.forEach(
      page.items,
      ({ offset, ...row }) => Effect.map(cite(offset), (citation) => ({ ...row, citation }))
    )
    return {
      ...head,
      turns,
      cursor: page.next === undefined ? null : encodeCursor({ tool: "show_session", key, at: page.next })
    }
  })

/** `show_session`: the manifest and retained turns of one session (as `logbook show --json`). */
export const showSession = Effect.fn("Mcp.showSession")(function*(sessionsDir: string, args: SessionArgs) {
  yield* budgetChars(args.max_tokens)
  const session = yield* sessionArgument(args.session)
  yield* findSession(sessionsDir, session)
  const i = yield* inspectSession(sessionsDir, session)
  // The goal, usage and cost the explanation computes over the whole session (a read of the retained log).
  const model = yield* queryExplanation(sessionsDir, session, "session")
  return yield* showSessionResult(args, i, model, (offset) => citeLine(session, i.paths.events, offset))
}, Effect.mapError(toToolError))

/** The arguments of `read_turn`. */
export interface ReadTurnArgs extends SessionArgs {
  readonly turn: number
}

/** A `read_turn` call's arguments checked (shared by the store's and the fleet's `read_turn`). */
export const readTurnRequest = Effect.fn("Mcp.readTurnRequest")(function*(args: ReadTurnArgs) {
  const budget = yield* budgetChars(args.max_tokens)
  const session = yield* sessionArgument(args.session)
  const turn = yield* intArgument("turn", args.turn, 1, 1, Number.MAX_SAFE_INTEGER)
  const key = JSON.stringify([session, turn])
  const cursor = yield* decodeCursor("read_turn", key, args.cursor)
  return { session, turn, key, start: cursor?.at ?? 0, room: budget - PAGE_OVERHEAD }
})

/** A span of the log (offset and length, newline included) that a page cites. */
export interface Span {
  readonly offset: number
  readonly length: number
}

/**
 * One `read_turn` page from a turn's records: events rendered and redacted, cut at the budget
 * as they stream (a turn of any size holds at most one page in memory), then cited by `cite`.
 */
export const turnPage = <E, R, E2, R2>(
  request: Effect.Success<ReturnType<typeof readTurnRequest>>,
  records: Stream.Stream<LogRecord, E, R>,
  cite: (spans: ReadonlyArray<Span>) => Effect.Effect<ReadonlyArray<CitationJson | null>, E2, R2>
) =>
  Effect.gen(function*() {
    const { key, room, session, start, turn } = request
    const collected = yield* records.pipe(
      Stream.filter((r) => r._tag === "Event"),
      Stream.drop(start),
      Stream.map((r) => {
        const rendered = renderEvent(redactJson(JSON.parse(encodeEventForDisplay(r.event))))
        return { ...rendered, offset: r.offset, length: r.length, size: jsonSize(rendered) + CITATION_SIZE }
      }),
      Stream.mapAccum(() => 0, (used, e) => {
        const inPage = used === 0 || used + e.size <= room
        return [inPage ? used + e.size : Number.POSITIVE_INFINITY, [{ ...e, inPage }]] as const
      }),
      // The first event past the budget is read (and dropped) to know whether the turn continues.
      Stream.takeUntil((e) => !e.inPage),
      Stream.runCollect
    )
    const page = collected.filter((e) => e.inPage)
    const citations = yield* cite(page)
    const events = page.map((e, k) => ({ type: e.type, text: e.text, citation: citations[k] ?? null }))
    const next = collected.length > page.length ? start + page.length : undefined
    return {
      session,
      turn,
      events,
      cursor: next === undefined ? null : encodeCursor({ tool: "read_turn", key, at: next })
    }
  })

/**
 * `read_turn`: the events of one turn (as `logbook turn`), rendered compactly, redacted, read as
 * a stream and cut at the budget: a turn of any size holds at most one page in memory.
 */
export const readTurnPage = Effect.fn("Mcp.readTurn")(function*(sessionsDir: string, args: ReadTurnArgs) {
  const request = yield* readTurnRequest(args)
  yield* findSession(sessionsDir, request.session)
  const found = yield* readTurn(sessionsDir, request.session, request.turn)
  return yield* turnPage(
    request,
    found.records,
    (spans) => citeSpans(request.session, found.inspection.paths.events, spans)
  )
}, Effect.mapError(toToolError))

/** The arguments of `explain_session`. */
export interface ExplainArgs extends SessionArgs {
  readonly format?: "text" | "json" | undefined
  readonly scope?: "task" | "session" | undefined
}

/** An `explain_session` call's arguments checked (shared by the store's and the fleet's). */
export const explainRequest = Effect.fn("Mcp.explainRequest")(function*(args: ExplainArgs) {
  const budget = yield* budgetChars(args.max_tokens)
  const session = yield* sessionArgument(args.session)
  const format = args.format ?? "text"
  const scope = args.scope ?? "task"
  const key = JSON.stringify([session, format, scope])
  const cursor = yield* decodeCursor("explain_session", key, args.cursor)
  return { budget, session, format, scope, key, start: cursor?.at ?? 0 }
})

/** The `explain_session` result of a model: rendered (text or JSON), redacted, one page of it. */
export const explainResult = (
  request: Effect.Success<ReturnType<typeof explainRequest>>,
  model: ExplanationModel
) => {
  const { budget, format, key, session, start } = request
  const text = redactSecrets(format === "json" ? JSON.stringify(model) : renderSummary(model))
  const page = pageText(text, start, budget - PAGE_OVERHEAD)
  return {
    session,
    format,
    text: page.text,
    total_chars: page.total,
    cursor: page.next === undefined ? null : encodeCursor({ tool: "explain_session", key, at: page.next })
  }
}

/** `explain_session`: the explanation as `logbook explain` (text) or `--json`, paged by characters. */
export const explainSession = Effect.fn("Mcp.explainSession")(function*(sessionsDir: string, args: ExplainArgs) {
  const request = yield* explainRequest(args)
  yield* findSession(sessionsDir, request.session)
  const model = yield* queryExplanation(sessionsDir, request.session, request.scope)
  return explainResult(request, model)
}, Effect.mapError(toToolError))

/** The arguments of `evidence`. */
export interface EvidenceArgs extends SessionArgs {
  readonly offset: number
  readonly digest: string
}

/** An `evidence` call's arguments checked (shared by the store's and the fleet's). */
export const evidenceRequest = Effect.fn("Mcp.evidenceRequest")(function*(args: EvidenceArgs) {
  const budget = yield* budgetChars(args.max_tokens)
  const session = yield* sessionArgument(args.session)
  const offset = yield* intArgument("offset", args.offset, 0, 0, Number.MAX_SAFE_INTEGER)
  if (!/^[0-9a-fA-F]{64}$/u.test(args.digest)) {
    return yield* new McpToolError({
      message: "digest must be the 64 hexadecimal digits of a citation's SHA-256 (copy it from the citation)"
    })
  }
  const digest = args.digest.toLowerCase()
  const key = JSON.stringify([session, offset, digest])
  const cursor = yield* decodeCursor("evidence", key, args.cursor)
  return { session, offset, digest, key, start: cursor?.at ?? 0, limit: Math.min(budget - PAGE_OVERHEAD, 32 * 1024) }
})

/** `evidence`: `queryEvidence` as `logbook evidence --json`, one page of at most the budget. */
export const evidence = Effect.fn("Mcp.evidence")(function*(sessionsDir: string, args: EvidenceArgs) {
  const request = yield* evidenceRequest(args)
  const { key, limit, offset, session, start } = request
  yield* findSession(sessionsDir, session)
  const page = yield* queryEvidence(sessionsDir, session, { offset, digest: request.digest }, start, limit)
  return {
    citation: { session, offset: page.reference.offset, digest: page.reference.digest },
    text: redactSecrets(page.text),
    total_chars: page.total_bytes,
    cursor: page.next_offset === null ? null : encodeCursor({ tool: "evidence", key, at: page.next_offset })
  }
}, Effect.mapError(toToolError))

/** The arguments of `facts`. */
export interface FactsArgs {
  readonly session?: string | undefined
  readonly limit?: number | undefined
  readonly max_tokens?: number | undefined
  readonly cursor?: string | undefined
}

/** A `facts` call's arguments checked (shared by the store's and the fleet's). */
export const factsRequest = Effect.fn("Mcp.factsRequest")(function*(args: FactsArgs) {
  const budget = yield* budgetChars(args.max_tokens)
  const limit = yield* intArgument("limit", args.limit, 100, 1, 1000)
  const session = args.session === undefined ? undefined : yield* sessionArgument(args.session)
  const key = JSON.stringify([session ?? null, limit])
  const cursor = yield* decodeCursor("facts", key, args.cursor)
  return {
    limit,
    session,
    /** One page of facts (already redacted), trimmed; `cursorAfter` gives the next page's cursor. */
    page: (all: ReadonlyArray<{ readonly session_id: string; readonly fact: string }>) =>
      pageItems(
        all.map((f) => ({ session: f.session_id, fact: trimText(redactSecrets(f.fact)) })),
        cursor?.at ?? 0,
        budget - PAGE_OVERHEAD,
        (r) => jsonSize(r) + CITATION_SIZE
      ),
    cursorAfter: (next: number | undefined) =>
      next === undefined ? null : encodeCursor({ tool: "facts", key, at: next })
  }
})

/** `facts`: `queryFacts` as `logbook facts --json`, each fact cited from its view's source. */
export const facts = Effect.fn("Mcp.facts")(function*(sessionsDir: string, args: FactsArgs) {
  const request = yield* factsRequest(args)
  if (request.session !== undefined) yield* findSession(sessionsDir, request.session)
  const page = request.page(yield* queryFacts(sessionsDir, request.limit, { session: request.session }))
  const offsets = new Map<string, { readonly paths: SessionPaths; readonly offsets: Map<string, number> }>()
  const out = []
  for (const row of page.items) {
    let known = offsets.get(row.session)
    if (known === undefined) {
      const paths = yield* findSession(sessionsDir, row.session)
      known = { paths, offsets: yield* factOffsets(paths) }
      offsets.set(row.session, known)
    }
    const offset = known.offsets.get(row.fact)
    const citation = offset === undefined ? null : yield* citeLine(row.session, known.paths.events, offset)
    out.push({ ...row, citation })
  }
  return { facts: out, cursor: request.cursorAfter(page.next) }
}, Effect.mapError(toToolError))

/** The `goal_progress` result of a session's goal snapshot and ledger: redacted JSON text, one page of it. */
export const goalProgressResult = Effect.fn("Mcp.goalProgressResult")(function*(
  args: SessionArgs,
  goal: Option.Option<GoalSnapshot>,
  progress: Option.Option<ProgressLedger>
) {
  const budget = yield* budgetChars(args.max_tokens)
  const key = JSON.stringify([args.session])
  const cursor = yield* decodeCursor("goal_progress", key, args.cursor)
  const text = JSON.stringify(
    redactJson({ goal: Option.getOrNull(goal), progress: Option.getOrNull(progress) }),
    null,
    1
  )
  const page = pageText(text, cursor?.at ?? 0, budget - PAGE_OVERHEAD)
  return {
    session: args.session,
    has_goal: Option.isSome(goal),
    has_progress: Option.isSome(progress),
    text: page.text,
    total_chars: page.total,
    cursor: page.next === undefined ? null : encodeCursor({ tool: "goal_progress", key, at: page.next })
  }
})

/** `goal_progress`: the stored goal snapshot and progress ledger, redacted, as JSON text paged by characters. */
export const goalProgress = Effect.fn("Mcp.goalProgress")(function*(sessionsDir: string, args: SessionArgs) {
  yield* budgetChars(args.max_tokens)
  const paths = yield* located(sessionsDir, args.session)
  const goal = yield* loadGoalSnapshot(paths)
  const progress = yield* loadProgress(paths)
  return yield* goalProgressResult(args, goal, progress)
}, Effect.mapError(toToolError))
