/**
 * The Session page of `logbook serve`: the conversation turn by turn — prompts, agent messages,
 * reasoning (collapsed), commands with their exit code and output (collapsed, cut with a link to
 * the whole event), diffs, tool calls and results, errors, compactions and usage per turn — with a
 * turn index on the side. Turns are paged (a long session sends {@link TURNS_PER_PAGE} turns at
 * a time) from the turn index, so only the bytes of the page's turns are read. Every event is
 * anchored `#ev-<offset>` (its byte offset in `events.jsonl`, what evidence and search name), so
 * a link can open the page holding it and highlight it.
 */
import type { ThreadEvent, ThreadItem, TurnTable } from "@logbook/domain"
import { redactJson } from "@logbook/domain"
import type { InspectedSession, LogRecord } from "@logbook/projections"
import { BLOCK_CHARS, h, page, queryHref, seg, shown, shownBlock } from "./ServeHtml.ts"

/** Turns per page of a session. */
export const TURNS_PER_PAGE = 20

/** Which turns a page shows: table indices `[first, end)` and the byte range holding them. */
export interface TurnPage {
  /** 1-based. */
  readonly page: number
  readonly pages: number
  readonly first: number
  readonly end: number
  readonly start: number
  readonly stop: number
}

/** The page holding table index `index` (pre-turn events sit on page 1). */
export const turnPage = (table: TurnTable, fileLen: number, pageNumber: number): TurnPage | undefined => {
  const pages = Math.max(1, Math.ceil(table.length / TURNS_PER_PAGE))
  if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > pages) return undefined
  const first = (pageNumber - 1) * TURNS_PER_PAGE
  const end = Math.min(table.length, first + TURNS_PER_PAGE)
  const start = pageNumber === 1 ? 0 : table.startAt(first)
  const stop = end < table.length ? table.startAt(end) : fileLen
  return { page: pageNumber, pages, first, end, start, stop }
}

/** The page number holding byte `offset` (the turn that starts at or before it). */
export const pageOfOffset = (table: TurnTable, offset: number): number => {
  let lo = 0
  let hi = table.length - 1
  let found = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (table.startAt(mid) <= offset) {
      found = mid
      lo = mid + 1
    } else {
      hi = mid - 1
    }
  }
  return Math.floor(found / TURNS_PER_PAGE) + 1
}

/** The page number holding turn `turn`, or `undefined` when the index lacks it. */
export const pageOfTurn = (table: TurnTable, turn: number): number | undefined => {
  for (let i = 0; i < table.length; i++) if (table.turnAt(i) === turn) return Math.floor(i / TURNS_PER_PAGE) + 1
  return undefined
}

const json = (value: unknown): string => JSON.stringify(redactJson(value), null, 2) ?? ""

const block = (text: string, sessionId: string, offset: number, cls = "out"): string => {
  const b = shownBlock(text)
  return `<pre class="${cls}">${b.html}</pre>` +
    (b.cut
      ? `<p class="cut">Cut at ${BLOCK_CHARS.toLocaleString("en-US")} characters of ${
        text.length.toLocaleString("en-US")
      }. <a href="/s/${seg(sessionId)}/event/${offset}">Show the whole event</a></p>`
      : "")
}

const details = (summary: string, body: string, open = false): string =>
  `<details${open ? " open" : ""}><summary>${summary}</summary>${body}</details>`

const diffBlock = (diff: string, sessionId: string, offset: number): string => {
  const b = shownBlock(diff)
  const lines = b.html.split("\n").map((line) => {
    const cls = line.startsWith("+") && !line.startsWith("+++")
      ? "add"
      : line.startsWith("-") && !line.startsWith("---")
      ? "del"
      : line.startsWith("@@")
      ? "hunk"
      : ""
    return cls === "" ? line : `<span class="${cls}">${line}</span>`
  })
  return `<pre class="diff">${lines.join("\n")}</pre>` +
    (b.cut
      ? `<p class="cut">Diff cut. <a href="/s/${seg(sessionId)}/event/${offset}">Show the whole event</a></p>`
      : "")
}

const exitBadge = (code: number | undefined, status: string): string =>
  code === undefined
    ? `<span class="badge st-${h(status)}">${h(status)}</span>`
    : `<span class="badge ${code === 0 ? "ok" : "bad"}">exit ${code}</span>`

const usageLine = (
  u: { readonly input_tokens: number; readonly cached_input_tokens: number; readonly output_tokens: number } | undefined
) =>
  u === undefined
    ? ""
    : `<span class="usage">${u.input_tokens.toLocaleString("en-US")} in (${
      u.cached_input_tokens.toLocaleString("en-US")
    } cached) · ${u.output_tokens.toLocaleString("en-US")} out</span>`

const renderItem = (item: ThreadItem, phase: string, sessionId: string, offset: number): string => {
  switch (item.type) {
    case "agent_message":
      // Claude Code writes text blocks of bare newlines between tool calls: kept in the log, said
      // in one muted line here instead of an empty box.
      return `<div class="msg agent"><div class="who">agent</div>${
        item.text.trim().length === 0
          ? `<span class="muted">(an empty message)</span>`
          : block(item.text, sessionId, offset, "text")
      }</div>`
    case "reasoning":
      return details("Reasoning", block(item.text, sessionId, offset, "text"))
    case "plan":
      return details("Plan", block(item.text, sessionId, offset, "text"), true)
    case "decision":
      return `<div class="decision"><b>Decision:</b> ${shown(item.summary)}<br><span class="muted">${
        shown(item.rationale, 2000)
      }</span></div>`
    case "command_execution":
      return `<div class="cmd"><code class="line">$ ${shown(item.command, 2000)}</code> ${
        exitBadge(item.exit_code, item.status)
      }${
        item.aggregated_output.length === 0
          ? ""
          : details(
            `Output (${item.aggregated_output.length.toLocaleString("en-US")} characters)`,
            block(item.aggregated_output, sessionId, offset)
          )
      }</div>`
    case "tool_invocation":
      return `<div class="tool"><b>Tool</b> <code>${shown(item.tool_name)}</code> <span class="badge st-${
        h(item.status)
      }">${h(item.outcome ?? item.status)}</span>${
        item.arguments === undefined ? "" : details("Arguments", block(json(item.arguments), sessionId, offset))
      }</div>`
    case "tool_output":
      return `<div class="tool"><b>Result</b> of <code>${shown(item.call_id)}</code> ${
        exitBadge(item.exit_code, item.status)
      }${item.output.length === 0 ? "" : details("Output", block(item.output, sessionId, offset))}</div>`
    case "file_change":
      return `<div class="change"><b>Changed</b> ${
        item.changes.map((c) => `<code>${shown(c.path)}</code> <span class="muted">(${h(c.kind)})</span>`).join(", ")
      } <span class="badge st-${h(item.status)}">${h(item.status)}</span>${
        item.unified_diff === undefined ? "" : details("Diff", diffBlock(item.unified_diff, sessionId, offset), true)
      }</div>`
    case "mcp_tool_call":
      return `<div class="tool"><b>MCP</b> <code>${shown(item.tool_name)}</code> ${h(item.status ?? "")}${
        item.arguments === undefined ? "" : details("Arguments", block(json(item.arguments), sessionId, offset))
      }${item.result === undefined ? "" : details("Result", block(item.result, sessionId, offset))}</div>`
    case "web_search":
      return `<div class="tool"><b>Web search</b> ${shown(item.query)}</div>`
    case "harness":
      return `<div class="harness muted">${h(item.event)}${
        item.message === undefined ? "" : `: ${shown(item.message, 1000)}`
      }</div>`
    case "error":
      return `<div class="error"><b>Error</b> ${block(item.message, sessionId, offset, "text")}</div>`
    default:
      return `<div class="muted">${h(phase)} item</div>`
  }
}

/** The HTML of one event (inside its anchored wrapper); `turn` numbers a `turn.started`. */
export const renderEvent = (event: ThreadEvent, sessionId: string, offset: number, turn?: number): string => {
  const wrap = (cls: string, body: string) =>
    `<div class="ev ${cls}" id="ev-${offset}" data-offset="${offset}">${body}</div>`
  switch (event.type) {
    case "turn.started": {
      const goal = event.context?.goal
      return wrap(
        "prompt",
        `<div class="msg user"><div class="who">${h(event.context?.origin ?? "user")}${
          turn === undefined ? "" : ` · turn ${turn}`
        }${
          event.context === undefined ? "" : ` · <span class="time">${shown(event.context.timestamp, 40)}</span>`
        }</div>${
          goal === undefined ? "<p class=\"muted\">(prompt not recorded)</p>" : block(goal, sessionId, offset, "text")
        }</div>`
      )
    }
    case "item.completed":
      return wrap(`item ${event.item.type}`, renderItem(event.item, "completed", sessionId, offset))
    case "item.started":
      return event.item.type === "command_execution" || event.item.type === "tool_invocation"
        ? wrap(
          "started muted",
          `started: ${
            event.item.type === "command_execution"
              ? `<code>${shown(event.item.command)}</code>`
              : `<code>${shown(event.item.tool_name)}</code>`
          }`
        )
        : ""
    case "item.updated":
      return ""
    case "turn.completed":
      return wrap("end", `Turn completed ${usageLine(event.usage)}`)
    case "turn.failed":
      return wrap("end error", `<b>Turn failed:</b> ${shown(event.message, 2000)} ${usageLine(event.usage)}`)
    case "turn.blocked":
      return wrap("end error", `<b>Turn blocked:</b> ${shown(event.message, 2000)} ${usageLine(event.usage)}`)
    case "error":
      return wrap("error", `<b>Error</b> ${block(event.message, sessionId, offset, "text")}`)
    case "thread.started":
      return wrap("muted", `Thread started <code>${shown(event.thread_id)}</code>`)
    case "thread.completed":
      return wrap(
        "end",
        `Thread completed (${h(event.subtype)}) ${usageLine(event.usage)}${
          event.total_cost_usd === undefined ? "" : ` · $${h(event.total_cost_usd.toFixed(4))}`
        }`
      )
    case "thread.compact_boundary":
      return wrap("compaction", "— context compacted —")
    case "context.reset":
      return wrap("compaction", "— context reset —")
    default:
      return wrap("other muted", details(h(event.type), `<pre class="out">${shownBlock(json(event), 4000).html}</pre>`))
  }
}

/** The HTML of a page's records, grouped into turn sections (`turnsAt`: turn number by start offset). */
export const renderRecords = (
  records: ReadonlyArray<LogRecord>,
  sessionId: string,
  turnsAt: ReadonlyMap<number, number>
): string => {
  const out: Array<string> = []
  let open = false
  for (const record of records) {
    if (record._tag === "Skipped") {
      out.push(
        `<div class="ev skipped muted" id="ev-${record.offset}">${
          h(record.kind)
        } line skipped (${record.length} bytes)</div>`
      )
      continue
    }
    if (record._tag !== "Event") continue
    const turn = turnsAt.get(record.offset)
    if (record.event.type === "turn.started") {
      if (open) out.push("</section>")
      out.push(`<section class="turn" id="turn-${turn ?? `at-${record.offset}`}"><h2>Turn ${turn ?? "?"}</h2>`)
      open = true
    }
    out.push(renderEvent(record.event, sessionId, record.offset, turn))
  }
  if (open) out.push("</section>")
  return out.join("\n")
}

/**
 * Renders the Session page. `live` adds the live-update hook (the last page of a session still
 * being written), numbering the turns it will receive from `nextTurn`.
 */
export const renderSessionPage = (
  inspection: InspectedSession,
  sessionId: string,
  turns: TurnPage,
  records: ReadonlyArray<LogRecord>,
  live: { readonly nextTurn: number } | undefined
): string => {
  const table = inspection.effectiveTable
  const m = inspection.effectiveManifest
  const turnsAt = new Map<number, number>()
  for (let i = turns.first; i < turns.end; i++) turnsAt.set(table.startAt(i), table.turnAt(i))
  const index: Array<string> = []
  for (let i = 0; i < table.length; i++) {
    const n = table.turnAt(i)
    const p = Math.floor(i / TURNS_PER_PAGE) + 1
    index.push(
      `<li><a href="${
        p === turns.page ? `#turn-${n}` : `${queryHref(`/s/${seg(sessionId)}`, { page: p })}#turn-${n}`
      }">Turn ${n}</a></li>`
    )
  }
  const base = `/s/${seg(sessionId)}`
  const pager = turns.pages === 1 ?
    "" :
    `<p class="pager">${
      turns.page > 1 ? `<a rel="prev" href="${queryHref(base, { page: turns.page - 1 })}">← Earlier turns</a>` : ""
    } <span>turns page ${turns.page} of ${turns.pages}</span> ${
      turns.page < turns.pages
        ? `<a rel="next" href="${queryHref(base, { page: turns.page + 1 })}">Later turns →</a>`
        : ""
    }</p>`
  const evicted = (m.retained_turn_base ?? 1) > 1
    ? `<p class="muted">Turns before ${m.retained_turn_base ?? 1} were removed by the event cap.</p>`
    : ""
  const hook = live !== undefined
    ? `<div id="live" data-live="${
      h(`${base}/live?from=${turns.stop}&turn=${live.nextTurn}`)
    }"><p class="muted live-note">Live: new events appear here as they are flushed.</p></div>`
    : ""
  return page(
    `Session ${sessionId}`,
    "session",
    `<div class="layout"><aside class="turns"><h3>Turns</h3><ol>${index.join("")}</ol></aside>` +
      `<main class="conversation"><h1>${shown(sessionId, 200)}</h1>` +
      `<p class="meta"><span class="st st-${h(m.status)}">${
        h(m.status)
      }</span> · ${m.turn_count} turns · ${m.event_count} events · updated ${shown(m.updated_at, 40)}${
        inspection.live ? " · <span class=\"live\">live</span>" : ""
      } · <a href="${base}/explain">Explanation</a></p>` +
      `${evicted}${pager}${renderRecords(records, sessionId, turnsAt)}${hook}${pager}</main></div>`
  )
}

const TEXT_FIELDS = ["text", "command", "aggregated_output", "output", "unified_diff", "result", "message", "rationale"]

/** The long text fields of an event (an item's, or the event's own), each with its name. */
const textsOf = (event: ThreadEvent): Array<readonly [string, string]> => {
  const source: object = "item" in event ? event.item : event
  const out: Array<readonly [string, string]> = []
  for (const [key, value] of Object.entries(source)) {
    if (TEXT_FIELDS.includes(key) && typeof value === "string" && value.length > 0) out.push([key, value])
  }
  return out
}

/**
 * The page showing one whole event (what a cut block links to): each long text field as a block
 * bounded at `limit` characters, then the event's JSON.
 */
export const renderEventPage = (event: ThreadEvent, sessionId: string, offset: number, limit: number): string =>
  page(
    `Event ${offset} of ${sessionId}`,
    "session",
    `<main><p><a href="${h(`/s/${seg(sessionId)}?at=${offset}#ev-${offset}`)}">← Back to the conversation</a></p>` +
      `<h1>Event at byte ${offset}</h1>` +
      textsOf(event).map(([key, text]) => {
        const b = shownBlock(text, limit)
        return `<h2>${h(key)}</h2><pre class="out">${b.html}</pre>${
          b.cut
            ? `<p class="cut">Cut at ${
              limit.toLocaleString("en-US")
            } characters; <code>logbook events</code> prints it whole.</p>`
            : ""
        }`
      }).join("") +
      details("Event JSON", `<pre class="out">${shownBlock(json(event), limit).html}</pre>`) +
      "</main>"
  )
