/**
 * The Search page of `logbook serve`: BM25 search over facts or full history (`searchMemory`, the
 * engine `logbook search` uses, its index kept warm by the server's `SearchIndexCache`), as a
 * page and as an HTML fragment the page's script fetches while the user types. A history hit
 * links to the exact turn and event (`/s/<id>?at=<offset>#ev-<offset>`).
 */
import type { MemorySearchResult } from "@logbook/projections"
import { searchMemory } from "@logbook/projections"
import { Effect } from "effect"
import { h, page, sessionHref, shown } from "./ServeHtml.ts"
import { BadParameter } from "./SessionsPage.ts"

/** Hits per search (each history hit re-reads its turn for the snippet: a short list answers while typing). */
export const SEARCH_LIMIT = 12

/** What the Search page was asked for. */
export interface SearchQuery {
  readonly text: string
  readonly scope: "facts" | "history"
}

/** Reads the search parameters (`q`, `scope`; history by default: its hits open turns). */
export const parseSearchQuery = (params: URLSearchParams): SearchQuery | BadParameter => {
  const text = params.get("q") ?? ""
  if (text.length > 500) return new BadParameter({ detail: "q is longer than 500 characters" })
  const scope = params.get("scope") ?? "history"
  if (scope !== "facts" && scope !== "history") return new BadParameter({ detail: "scope must be facts or history" })
  return { text, scope }
}

const hitHtml = (hit: MemorySearchResult): string => {
  const href = sessionHref(hit.session, hit.offset)
  const where = hit.turn === undefined ? "" : ` · turn ${hit.turn}`
  return `<li class="hit"><a href="${h(href)}"><span class="hit-session">${shown(hit.session, 120)}${h(where)}</span>` +
    `<span class="hit-snippet">${shown(hit.snippet, 400)}</span></a><span class="muted score">score ${
      h(hit.score.toFixed(3))
    }</span></li>`
}

/** The results fragment: the hits as a list, or a line saying there are none. */
export const renderResults = (query: SearchQuery, hits: ReadonlyArray<MemorySearchResult>): string =>
  query.text.trim() === ""
    ? "<p class=\"muted\">Type to search the recorded sessions.</p>"
    : hits.length === 0
    ? `<p class="muted">No ${query.scope === "facts" ? "facts" : "turns"} match ${shown(query.text, 100)}.</p>`
    : `<ol class="hits" data-count="${hits.length}">${hits.map(hitHtml).join("")}</ol>`

/** The whole Search page with the results of `query`. */
export const renderSearchPage = (query: SearchQuery, results: string): string =>
  page(
    "Search",
    "search",
    `<main><h1>Search</h1><form class="filters" method="get" action="/search" id="search-form">` +
      `<input type="search" name="q" id="search-q" value="${h(query.text)}" autofocus autocomplete="off" ` +
      `placeholder="Search turns and facts" aria-label="Search">` +
      `<select name="scope" id="search-scope" aria-label="Scope">` +
      `<option value="history"${query.scope === "history" ? " selected" : ""}>history (turns)</option>` +
      `<option value="facts"${query.scope === "facts" ? " selected" : ""}>facts</option></select>` +
      `<button type="submit">Search</button></form><div id="results" aria-live="polite">${results}</div></main>`
  )

/**
 * Runs `query` (no search for an empty query). With `refreshed` (the server's background
 * refresh of that scope's index), the index held is queried as it is; without, every session
 * is checked for changes first.
 */
export const runSearch = Effect.fn("Serve.search")(function*<E, R>(
  sessionsDir: string,
  query: SearchQuery,
  refreshed?: Effect.Effect<void, E, R>
) {
  if (query.text.trim() === "") return []
  if (refreshed !== undefined) yield* refreshed
  return yield* searchMemory(sessionsDir, query.text, {
    scope: query.scope,
    maxResults: SEARCH_LIMIT,
    refresh: refreshed === undefined
  })
})
