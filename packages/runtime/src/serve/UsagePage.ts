/**
 * The Usage page of `logbook serve`: tokens (and cost, when recorded) across the sessions of the
 * store, per agent and per day, as a bar chart drawn on the server (inline SVG, no script, no
 * charting library) and a table. Each session counts on the day of its last update, with the
 * tokens of its turns read from at most the first 4 MiB of its log (as the Sessions page's
 * column); the server holds the summary and re-reads it in the background.
 */
import type { SessionListing } from "@logbook/projections"
import { Effect } from "effect"
import { h, page } from "./ServeHtml.ts"
import type { RowFacts } from "./SessionsPage.ts"
import { agentOf, AGENTS } from "./SessionsPage.ts"

/** Days the chart shows (the most recent ones with usage). */
export const USAGE_DAYS = 30

/** Tokens and cost of one agent on one day. */
export interface UsageCell {
  readonly tokens: number
  readonly costUsd: number
  readonly sessions: number
  /** Some session's log was longer than the bound read: the tokens are a lower bound. */
  readonly partial: boolean
}

/** The usage of a store: per day (`YYYY-MM-DD`, or `unknown`), per agent. */
export interface UsageSummary {
  readonly days: ReadonlyMap<string, ReadonlyMap<string, UsageCell>>
  readonly sessions: number
}

const emptyCell: UsageCell = { tokens: 0, costUsd: 0, sessions: 0, partial: false }

/** Sums the row facts of every session of `listing` by day of last update and agent. */
export const usageSummary = Effect.fn("Serve.usageSummary")(function*(
  rowFacts: (id: string) => Effect.Effect<RowFacts>,
  listing: SessionListing
) {
  const facts = yield* Effect.forEach(listing.sessions, (s) => rowFacts(s.id), { concurrency: 8 })
  const days = new Map<string, Map<string, UsageCell>>()
  listing.sessions.forEach((s, i) => {
    const f = facts[i]
    if (f === undefined) return
    const day = /^\d{4}-\d{2}-\d{2}/u.exec(s.updatedAt)?.[0] ?? "unknown"
    const agent = agentOf(s.id)
    const byAgent = days.get(day) ?? new Map<string, UsageCell>()
    const cell = byAgent.get(agent) ?? emptyCell
    byAgent.set(agent, {
      tokens: cell.tokens + f.tokens,
      costUsd: cell.costUsd + (f.costUsd ?? 0),
      sessions: cell.sessions + 1,
      partial: cell.partial || f.partial
    })
    days.set(day, byAgent)
  })
  return { days, sessions: listing.sessions.length } satisfies UsageSummary
})

const AGENT_ORDER = ["host", ...AGENTS]
const COLOURS: Readonly<Record<string, string>> = {
  host: "#475467",
  codex: "#1849a9",
  claude: "#c4320a",
  gemini: "#067647"
}

const formatTokens = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} k` : String(n)

/** The chart: one row per day, a bar per agent stacked left to right, scaled to the busiest day. */
export const usageChart = (summary: UsageSummary): string => {
  const days = [...summary.days.keys()].sort().reverse().slice(0, USAGE_DAYS)
  if (days.length === 0) return "<p class=\"muted\">No usage recorded.</p>"
  const total = (day: string) => [...(summary.days.get(day)?.values() ?? [])].reduce((a, c) => a + c.tokens, 0)
  const max = Math.max(1, ...days.map(total))
  const left = 100
  const width = 900
  const rowH = 22
  const height = 30 + days.length * rowH
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Tokens per day and agent" class="usage-chart" width="100%" viewBox="0 0 ${
      width + 140
    } ${height}">`
  ]
  AGENT_ORDER.forEach((agent, i) => {
    parts.push(
      `<rect x="${left + i * 110}" y="4" width="12" height="12" fill="${COLOURS[agent] ?? "#999"}"></rect>` +
        `<text x="${left + i * 110 + 16}" y="14">${h(agent)}</text>`
    )
  })
  days.forEach((day, row) => {
    const y = 26 + row * rowH
    parts.push(`<text x="0" y="${y + 14}">${h(day)}</text>`)
    let x = left
    for (const agent of AGENT_ORDER) {
      const cell = summary.days.get(day)?.get(agent)
      if (cell === undefined || cell.tokens === 0) continue
      const w = Math.max(1, (cell.tokens / max) * width)
      parts.push(
        `<rect class="bar" data-agent="${h(agent)}" x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="${
          rowH - 6
        }" fill="${COLOURS[agent] ?? "#999"}"><title>${h(`${agent} ${day}: ${cell.tokens} tokens`)}</title></rect>`
      )
      x += w
    }
    parts.push(`<text x="${(x + 6).toFixed(1)}" y="${y + 14}">${h(formatTokens(total(day)))}</text>`)
  })
  parts.push("</svg>")
  return parts.join("")
}

/** Renders the Usage page. */
export const renderUsagePage = (summary: UsageSummary): string => {
  const totals = new Map<string, UsageCell>()
  for (const byAgent of summary.days.values()) {
    for (const [agent, cell] of byAgent) {
      const t = totals.get(agent) ?? emptyCell
      totals.set(agent, {
        tokens: t.tokens + cell.tokens,
        costUsd: t.costUsd + cell.costUsd,
        sessions: t.sessions + cell.sessions,
        partial: t.partial || cell.partial
      })
    }
  }
  const rows = AGENT_ORDER.filter((a) => totals.has(a)).map((agent) => {
    const t = totals.get(agent) ?? emptyCell
    return `<tr><td>${h(agent)}</td><td class="num">${t.sessions}</td><td class="num">${t.partial ? "≥ " : ""}${
      t.tokens.toLocaleString("en-US")
    }</td><td class="num">${t.costUsd === 0 ? "—" : `$${t.costUsd.toFixed(2)}`}</td></tr>`
  })
  return page(
    "Usage",
    "usage",
    `<main><h1>Usage</h1><p class="muted">Tokens (input + output) of ${
      summary.sessions.toLocaleString("en-US")
    } sessions, ` +
      `each counted on the day of its last update; the ${USAGE_DAYS} most recent days with usage.</p>` +
      `<section class="chart">${usageChart(summary)}</section>` +
      `<table class="sessions"><thead><tr><th>Agent</th><th class="num">Sessions</th><th class="num">Tokens</th>` +
      `<th class="num">Cost</th></tr></thead><tbody>${rows.join("")}</tbody></table></main>`
  )
}
