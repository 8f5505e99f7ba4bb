/**
 * The Sessions page of `logbook serve`: every session of the store, filtered (text, status,
 * agent), sorted and paginated on the server, so a store of 20 000 sessions sends one page of
 * rows. The listing is the manifests (`recentSessions`, cached by signature); the goal and token
 * columns are read only for the rows shown, each from a bounded prefix of its log.
 */
import type { ThreadEvent, UsageTotals } from "@logbook/domain"
import type { SessionListing, SessionSummary } from "@logbook/projections"
import { findSession, readEventRecords } from "@logbook/projections"
import { SessionFs } from "@logbook/store"
import { Data, Effect, Option, Stream } from "effect"
import { h, page, queryHref, sessionHref, shown } from "./ServeHtml.ts"

/** Rows per page. */
export const PAGE_SIZE = 50

/** The most bytes of a log read for a row's goal and tokens; a longer log shows its tokens as a lower bound. */
export const ROW_SCAN_BYTES = 4 * 1024 * 1024

/** The agents an imported session's name starts with (`<agent>-<id>`, docs/import.md); others were recorded by a host. */
export const AGENTS = ["codex", "claude", "gemini", "copilot", "cline", "roo", "cursor", "aider", "opencode"] as const

/** The agent of a session by its directory name: an importer's prefix, else `host`. */
export const agentOf = (session: string): string => AGENTS.find((a) => session.startsWith(`${a}-`)) ?? "host"

/** The columns a listing sorts by. */
export const SORTS = ["updated", "created", "turns", "events", "id"] as const

/** A column a listing sorts by. */
export type SortKey = typeof SORTS[number]

/** What the Sessions page was asked for, validated. */
export interface SessionsQuery {
  readonly text: string
  readonly status: string
  readonly agent: string
  readonly sort: SortKey
  readonly order: "asc" | "desc"
  /** Updated on or after this day (`YYYY-MM-DD`, the day as recorded in `updated_at`), or "". */
  readonly from: string
  /** Updated on or before this day, or "". */
  readonly to: string
  /** 1-based. */
  readonly page: number
}

/** A parameter the server refused, with what to send instead. */
export class BadParameter extends Data.TaggedError("BadParameter")<{ readonly detail: string }> {}

const STATUSES = ["", "active", "completed"]

/** Reads the Sessions page's parameters; anything out of its vocabulary is a {@link BadParameter}. */
export const parseSessionsQuery = (params: URLSearchParams): SessionsQuery | BadParameter => {
  const text = params.get("q") ?? ""
  if (text.length > 200) return new BadParameter({ detail: "q is longer than 200 characters" })
  const status = params.get("status") ?? ""
  if (!STATUSES.includes(status)) {
    return new BadParameter({ detail: `status must be one of ${STATUSES.filter((s) => s).join(", ")}` })
  }
  const agent = params.get("agent") ?? ""
  if (agent !== "" && agent !== "host" && !AGENTS.some((a) => a === agent)) {
    return new BadParameter({ detail: `agent must be one of host, ${AGENTS.join(", ")}` })
  }
  const sortText = params.get("sort") ?? "updated"
  const sort = SORTS.find((s) => s === sortText)
  if (sort === undefined) return new BadParameter({ detail: `sort must be one of ${SORTS.join(", ")}` })
  const orderText = params.get("order") ?? (sort === "id" ? "asc" : "desc")
  if (orderText !== "asc" && orderText !== "desc") return new BadParameter({ detail: "order must be asc or desc" })
  const from = params.get("from") ?? ""
  const to = params.get("to") ?? ""
  for (const [name, day] of [["from", from], ["to", to]] as const) {
    if (day !== "" && !/^\d{4}-\d{2}-\d{2}$/u.test(day)) {
      return new BadParameter({ detail: `${name} must be a day, YYYY-MM-DD` })
    }
  }
  const pageText = params.get("page") ?? "1"
  if (!/^[1-9][0-9]{0,8}$/u.test(pageText)) return new BadParameter({ detail: "page must be a whole number from 1" })
  return { text, status, agent, sort, order: orderText, from, to, page: Number(pageText) }
}

const compareBy = (sort: SortKey) => (a: SessionSummary, b: SessionSummary): number => {
  switch (sort) {
    case "updated":
      return a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0
    case "created":
      return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0
    case "turns":
      return a.turnCount - b.turnCount
    case "events":
      return a.eventCount - b.eventCount
    case "id":
      return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  }
}

/** One page of a listing: the rows, how many matched, and the number of pages. */
export interface SessionsSlice {
  readonly rows: ReadonlyArray<SessionSummary>
  readonly matched: number
  readonly pages: number
}

/**
 * Filters, sorts (ties by ascending id whatever the order, so the order is total and pages never
 * overlap) and cuts one page.
 * A page beyond the last is `undefined` (page 1 of an empty listing is an empty page).
 */
export const sliceSessions = (
  sessions: ReadonlyArray<SessionSummary>,
  query: SessionsQuery
): SessionsSlice | undefined => {
  const needle = query.text.toLowerCase()
  const kept = sessions.filter((s) =>
    (needle === "" || s.id.toLowerCase().includes(needle)) &&
    (query.status === "" || s.status === query.status) &&
    (query.agent === "" || agentOf(s.id) === query.agent) &&
    (query.from === "" || s.updatedAt.slice(0, 10) >= query.from) &&
    (query.to === "" || s.updatedAt.slice(0, 10) <= query.to)
  )
  const by = compareBy(query.sort)
  const sign = query.order === "asc" ? 1 : -1
  kept.sort((a, b) => sign * by(a, b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  const pages = Math.max(1, Math.ceil(kept.length / PAGE_SIZE))
  if (query.page > pages) return undefined
  const start = (query.page - 1) * PAGE_SIZE
  return { rows: kept.slice(start, start + PAGE_SIZE), matched: kept.length, pages }
}

/** What a row shows beyond its manifest: the first goal and the tokens recorded. */
export interface RowFacts {
  readonly goal: string | undefined
  readonly tokens: number
  readonly costUsd: number | undefined
  /** Only a prefix of the log was read: `tokens` is a lower bound. */
  readonly partial: boolean
}

const usageTokens = (u: UsageTotals | undefined): number => u === undefined ? 0 : u.input_tokens + u.output_tokens

/** A row's facts before any event: nothing known (and so possibly partial). */
export const noRowFacts: RowFacts = { goal: undefined, tokens: 0, costUsd: undefined, partial: true }

/** Folds one event into a row's facts. */
export const foldRow = (facts: RowFacts, event: ThreadEvent): RowFacts => {
  switch (event.type) {
    case "turn.started":
      return facts.goal === undefined && event.context?.goal !== undefined
        ? { ...facts, goal: event.context.goal }
        : facts
    case "turn.completed":
    case "turn.failed":
    case "turn.blocked":
      return { ...facts, tokens: facts.tokens + usageTokens(event.usage) }
    case "thread.completed":
      return event.total_cost_usd === undefined ? facts : { ...facts, costUsd: event.total_cost_usd }
    default:
      return facts
  }
}

/** The goal and tokens of one session from at most {@link ROW_SCAN_BYTES} of its log. */
export const rowFacts = (sessionsDir: string, id: string) =>
  Effect.gen(function*() {
    const paths = yield* findSession(sessionsDir, id)
    const fs = yield* SessionFs
    const info = yield* fs.lstat(paths.events)
    const size = Option.isSome(info) && info.value.type === "File" ? info.value.size : 0
    const facts = yield* Stream.runFold(
      readEventRecords(paths.events, { end: Math.min(size, ROW_SCAN_BYTES), chunkSize: 64 * 1024 }),
      (): RowFacts => ({ ...noRowFacts, partial: size > ROW_SCAN_BYTES }),
      (acc, record) => record._tag === "Event" ? foldRow(acc, record.event) : acc
    )
    return facts
  }).pipe(Effect.orElseSucceed((): RowFacts => noRowFacts))

const option = (value: string, label: string, current: string) =>
  `<option value="${h(value)}"${value === current ? " selected" : ""}>${h(label)}</option>`

const sortLink = (query: SessionsQuery, key: SortKey, label: string) => {
  const order = query.sort === key ? (query.order === "asc" ? "desc" : "asc") : key === "id" ? "asc" : "desc"
  const mark = query.sort === key ? (query.order === "asc" ? " ▲" : " ▼") : ""
  return `<a href="${queryHref("/", { q: query.text, status: query.status, agent: query.agent, sort: key, order })}">${
    h(label)
  }${mark}</a>`
}

/** Renders the Sessions page for one slice and the facts of its rows. */
export const renderSessionsPage = (
  query: SessionsQuery,
  slice: SessionsSlice,
  facts: ReadonlyArray<RowFacts>,
  unreadable: number
): string => {
  const rows = slice.rows.map((s, i) => {
    const f = facts[i]
    const tokens = f === undefined ? "" : `${f.partial ? "≥ " : ""}${f.tokens.toLocaleString("en-US")}`
    const cost = f?.costUsd === undefined ? "" : ` · $${f.costUsd.toFixed(2)}`
    return `<tr data-session="${h(s.id)}"><td><a href="${h(sessionHref(s.id))}">${shown(s.id, 120)}</a></td>` +
      `<td>${h(agentOf(s.id))}</td>` +
      `<td class="goal">${f?.goal === undefined ? "<span class=\"muted\">—</span>" : shown(f.goal, 160)}</td>` +
      `<td><span class="st st-${h(s.status)}">${h(s.status)}${s.inTurn ? " *" : ""}</span>${
        s.live ? " <span class=\"live\">live</span>" : ""
      }</td>` +
      `<td class="num">${s.turnCount}</td><td class="num">${h(tokens)}${h(cost)}</td>` +
      `<td class="time">${shown(s.updatedAt, 40)}</td></tr>`
  })
  const base = {
    q: query.text,
    status: query.status,
    agent: query.agent,
    from: query.from,
    to: query.to,
    sort: query.sort,
    order: query.order
  }
  const pager = [
    query.page > 1 ? `<a rel="prev" href="${queryHref("/", { ...base, page: query.page - 1 })}">← Newer</a>` : "",
    `<span>page ${query.page} of ${slice.pages} · ${slice.matched.toLocaleString("en-US")} sessions</span>`,
    query.page < slice.pages
      ? `<a rel="next" href="${queryHref("/", { ...base, page: query.page + 1 })}">Older →</a>`
      : ""
  ].join(" ")
  const form = `<form class="filters" method="get" action="/">` +
    `<input type="search" name="q" value="${
      h(query.text)
    }" placeholder="Filter by session id" aria-label="Filter by session id">` +
    `<select name="status" aria-label="Status">${
      STATUSES.map((s) => option(s, s === "" ? "any status" : s, query.status)).join("")
    }</select>` +
    `<select name="agent" aria-label="Agent">${
      ["", "host", ...AGENTS].map((a) => option(a, a === "" ? "any agent" : a, query.agent)).join("")
    }</select>` +
    `<label>from <input type="date" name="from" value="${h(query.from)}" aria-label="Updated from"></label>` +
    `<label>to <input type="date" name="to" value="${h(query.to)}" aria-label="Updated until"></label>` +
    `<input type="hidden" name="sort" value="${h(query.sort)}"><input type="hidden" name="order" value="${
      h(query.order)
    }"><button type="submit">Filter</button></form>`
  const table = rows.length === 0
    ? `<p class="muted">No sessions match. Record one with <code>logbook demo</code> or import some with <code>logbook import</code>.</p>`
    : `<table class="sessions"><thead><tr><th>${sortLink(query, "id", "Session")}</th><th>Agent</th><th>Goal</th>` +
      `<th>Status</th><th class="num">${sortLink(query, "turns", "Turns")}</th><th class="num">Tokens</th><th>${
        sortLink(query, "updated", "Updated")
      }</th></tr></thead><tbody>\n${rows.join("\n")}\n</tbody></table>`
  const note = unreadable === 0
    ? ""
    : `<p class="muted">${unreadable} director${
      unreadable === 1 ? "y" : "ies"
    } without a readable manifest.json skipped (inspect with <code>logbook verify</code>).</p>`
  return page(
    "Sessions",
    "sessions",
    `<main><h1>Sessions</h1>${form}<p class="pager">${pager}</p>${table}<p class="pager">${pager}</p>${note}</main>`
  )
}

/**
 * The Sessions page for `query` over `listing` (the server's held listing, or a fresh
 * `recentSessions`): the page's row facts read, rendered; `undefined` beyond the last page.
 */
export const sessionsPage = Effect.fn("Serve.sessionsPage")(function*<E, R>(
  facts: (id: string) => Effect.Effect<RowFacts>,
  listing: Effect.Effect<SessionListing, E, R>,
  query: SessionsQuery
) {
  const { sessions, unreadable } = yield* listing
  const slice = sliceSessions(sessions, query)
  if (slice === undefined) return Option.none<string>()
  const rows = yield* Effect.forEach(slice.rows, (s) => facts(s.id), { concurrency: 8 })
  return Option.some(renderSessionsPage(query, slice, rows, unreadable.length))
})
