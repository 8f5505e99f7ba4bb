/**
 * The request handler of `logbook serve`: one read-only HTTP app over a sessions root (or, with
 * `--db`, a fleet: whatever {@link ServeReader} it is given). Before any
 * route runs, a request must name an allowed `Host` (the bound address: a DNS-rebinding page on
 * another name is refused) and carry the run's token — as `?token=` once (answered with an
 * HttpOnly, SameSite=Strict cookie and a redirect that drops it from the URL) or as that cookie.
 * Only GET is served, no CORS header is ever sent, every page carries a Content-Security-Policy
 * that admits only this server's own script and style, and every failure becomes a short 4xx/5xx
 * page (never a stack trace).
 *
 * **Gotchas**: the live view streams for as long as the browser keeps the connection; each
 * stream is one poller of the reader's follower, ended when the client goes away.
 */
import { publicText, redactSecrets } from "@logbook/domain"
import type { LogRecord } from "@logbook/projections"
import { renderHtml, REPORT_CSP } from "@logbook/projections"
import type { Duration } from "effect"
import { Effect, Option, Result, Stream } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { parseSearchQuery, renderResults, renderSearchPage } from "./SearchPage.ts"
import { APP_CSS, APP_JS } from "./ServeAssets.ts"
import { errorPage, PAGE_CSP, seg } from "./ServeHtml.ts"
import type { ServeReader } from "./ServeReader.ts"
import { storeReader } from "./ServeReader.ts"
import { tokenMatches } from "./ServeToken.ts"
import { pageOfOffset, pageOfTurn, renderEvent, renderEventPage, renderSessionPage, turnPage } from "./SessionPage.ts"
import { BadParameter, parseSessionsQuery, sessionsPage } from "./SessionsPage.ts"
import type { UsageSummary } from "./UsagePage.ts"
import { renderUsagePage, usageSummary } from "./UsagePage.ts"

/** The cookie the token is kept in after the first visit. */
export const TOKEN_COOKIE = "logbook_token"

/** The most characters of one event's texts the whole-event page shows. */
export const EVENT_PAGE_CHARS = 1024 * 1024

/** What one server run serves and how it recognises its own requests. */
export interface ServeConfig {
  /** The sessions root read when no `reader` is given (through the request's services). */
  readonly sessionsDir: string
  /** What the pages read (the server's, with its held listing and indexes, or a fleet's); default: the store at `sessionsDir`. */
  readonly reader?: ServeReader | undefined
  readonly token: string
  /** Whether a `Host` header names this server (see {@link hostPolicy}). */
  readonly allowedHost: (host: string) => boolean
  /** How often the live view looks for new bytes (default 200 ms, as `events --follow`). */
  readonly pollInterval?: Duration.Input | undefined
  /** The usage summary the Usage page shows (the server's held one); default: computed per request. */
  readonly usage?: Effect.Effect<UsageSummary, unknown> | undefined
}

const isIpLiteral = (hostname: string): boolean =>
  /^(?:\d{1,3}\.){3}\d{1,3}$/u.test(hostname) || /^\[[0-9a-fA-F:.]+\]$/u.test(hostname)

/**
 * The `Host` values a server bound to `host:port` answers: the bound address and `localhost`
 * (with the port); bound to every interface (`0.0.0.0`, `::`), any IP literal with the port —
 * a rebinding attack needs a DNS name, and no name but `localhost` is accepted.
 */
export const hostPolicy = (host: string, port: number) => (given: string): boolean => {
  const suffix = `:${port}`
  if (!given.endsWith(suffix)) return false
  const name = given.slice(0, -suffix.length).toLowerCase()
  if (name === "localhost") return true
  if (host === "0.0.0.0" || host === "::") return isIpLiteral(name)
  const bound = host.includes(":") ? `[${host.toLowerCase()}]` : host.toLowerCase()
  return name === bound || ((host === "127.0.0.1" || host === "::1") && (name === "127.0.0.1" || name === "[::1]"))
}

const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "cross-origin-resource-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin"
}

const secured = (response: HttpServerResponse.HttpServerResponse, csp: string = PAGE_CSP) =>
  HttpServerResponse.setHeaders(response, { ...SECURITY_HEADERS, "content-security-policy": csp })

const htmlPage = (body: string, status = 200, csp?: string) =>
  secured(HttpServerResponse.text(body, { status, contentType: "text/html; charset=utf-8" }), csp)

const failPage = (status: number, title: string, detail: string) => htmlPage(errorPage(status, title, detail), status)

/** A session id from a path segment: a directory name of the root, never a path. */
const sessionIdOf = (segment: string): string | BadParameter => {
  const decoded = Result.try(() => decodeURIComponent(segment))
  if (Result.isFailure(decoded)) {
    return new BadParameter({ detail: "the session id in the URL is not valid percent-encoding" })
  }
  const id = decoded.success
  return id.length === 0 || id.length > 255 || id.startsWith(".") || /[/\\\u0000-\u001f]/u.test(id)
    ? new BadParameter({
      detail: "a session id is a directory name of the sessions root (no path separators, not starting with a dot)"
    })
    : id
}

/** A non-negative integer query parameter, or a {@link BadParameter} naming it. */
const intParam = (params: URLSearchParams, name: string): number | undefined | BadParameter => {
  const text = params.get(name)
  if (text === null) return undefined
  return /^[0-9]{1,15}$/u.test(text)
    ? Number(text)
    : new BadParameter({ detail: `${name} must be a whole number, got ${JSON.stringify(text.slice(0, 40))}` })
}

/** The tag of a failure, when it has one. */
const tagOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : ""

const messageOf = (error: unknown): string =>
  publicText(redactSecrets(error instanceof Error ? error.message : String(error)), 500)

/** Every failure of a route as its page: 400 for a bad parameter, 404 for what does not exist, 500 otherwise. */
const failureResponse = (error: unknown) => {
  if (error instanceof BadParameter) return failPage(400, "Bad request", error.detail)
  switch (tagOf(error)) {
    case "SessionNotFound":
    case "FleetSessionNotFound":
      return failPage(404, "Not found", "No such session here. The Sessions page lists them.")
    case "TurnNotFound":
    case "TurnEvicted":
      return failPage(404, "Not found", messageOf(error))
    default:
      return failPage(500, "Could not read this page", messageOf(error))
  }
}

const encoder = new TextEncoder()

/** One server-sent event carrying a rendered event, and whether it opens turn `turn`. */
const sseMessage = (html: string, turnStart: boolean, turn: number) =>
  encoder.encode(`event: ev\ndata: ${JSON.stringify({ html, turnStart, turn })}\n\n`)

/**
 * The live stream of session `id`: every event of `records` (those flushed after the page was
 * rendered), rendered as the page renders it; `nextTurn` numbers the next `turn.started`.
 */
const liveStream = (id: string, records: Stream.Stream<LogRecord, unknown>, nextTurn: number) =>
  records.pipe(
    Stream.mapAccum(() => nextTurn, (turn, record: LogRecord) => {
      if (record._tag !== "Event") return [turn, []] as const
      const starts = record.event.type === "turn.started"
      const html = renderEvent(record.event, id, record.offset, starts ? turn : undefined)
      return [starts ? turn + 1 : turn, html === "" ? [] : [sseMessage(html, starts, turn)]] as const
    }),
    Stream.merge(Stream.tick("15 seconds").pipe(Stream.map(() => encoder.encode(": keep-alive\n\n"))))
  )

/** The routes behind the guard. */
const route = (config: ServeConfig, path: string, params: URLSearchParams) =>
  Effect.gen(function*() {
    const reader = config.reader ??
      (yield* storeReader({ sessionsDir: config.sessionsDir, pollInterval: config.pollInterval }))
    if (path === "/assets/app.css") {
      return secured(HttpServerResponse.text(APP_CSS, { contentType: "text/css; charset=utf-8" }))
    }
    if (path === "/assets/app.js") {
      return secured(HttpServerResponse.text(APP_JS, { contentType: "text/javascript; charset=utf-8" }))
    }
    if (path === "/") {
      const query = parseSessionsQuery(params)
      if (query instanceof BadParameter) return yield* Effect.fail(query)
      const html = yield* sessionsPage(reader.rowFacts, reader.listing, query)
      return Option.isSome(html)
        ? htmlPage(html.value)
        : failPage(
          404,
          "Not found",
          `There is no page ${query.page} of this listing; the pager links to the pages there are.`
        )
    }
    if (path === "/usage") {
      const summary = config.usage ??
        Effect.flatMap(reader.listing, (listing) => usageSummary(reader.rowFacts, listing))
      return htmlPage(renderUsagePage(yield* summary))
    }
    if (path === "/search" || path === "/search/results") {
      const query = parseSearchQuery(params)
      if (query instanceof BadParameter) return yield* Effect.fail(query)
      const results = renderResults(query, yield* reader.search(query))
      return htmlPage(path === "/search" ? renderSearchPage(query, results) : results)
    }
    const parts = path.split("/")
    if (parts[1] !== "s" || parts[2] === undefined || parts.length > 5) {
      return failPage(404, "Not found", "There is no such page. Start from the Sessions page.")
    }
    const id = sessionIdOf(parts[2])
    if (id instanceof BadParameter) return yield* Effect.fail(id)
    const view = parts[3]
    if (view === undefined && parts.length === 3) return yield* sessionView(reader, id, params)
    if (view === "explain" && parts.length === 4) {
      const model = yield* reader.explanation(id)
      const html = renderHtml(model, {
        evidenceHref: (e) => `/s/${seg(id)}?at=${e.offset}#ev-${e.offset}`,
        backLink: { href: `/s/${seg(id)}`, label: "← Back to the conversation" }
      })
      return htmlPage(html, 200, REPORT_CSP)
    }
    if (view === "event" && parts.length === 5) {
      const offsetText = parts[4] ?? ""
      if (!/^[0-9]{1,15}$/u.test(offsetText)) {
        return yield* Effect.fail(new BadParameter({ detail: "the event offset must be a whole number" }))
      }
      return yield* eventView(reader, id, Number(offsetText))
    }
    if (view === "live" && parts.length === 4) return yield* liveView(reader, id, params)
    return failPage(404, "Not found", "There is no such page. Start from the Sessions page.")
  })

/** `/s/<id>`: one page of turns (`page`, or the page holding byte `at` or turn `turn`). */
const sessionView = (reader: ServeReader, id: string, params: URLSearchParams) =>
  Effect.gen(function*() {
    const at = intParam(params, "at")
    const turn = intParam(params, "turn")
    const pageParam = intParam(params, "page")
    for (const p of [at, turn, pageParam]) if (p instanceof BadParameter) return yield* Effect.fail(p)
    const inspection = yield* reader.inspect(id)
    const table = inspection.effectiveTable
    if (typeof at === "number" && at >= inspection.fileLen) {
      return yield* Effect.fail(
        new BadParameter({ detail: `offset ${at} is beyond the end of the log (${inspection.fileLen} bytes)` })
      )
    }
    const pageNumber = typeof at === "number"
      ? pageOfOffset(table, at)
      : typeof turn === "number"
      ? pageOfTurn(table, turn)
      : typeof pageParam === "number"
      ? pageParam
      : 1
    if (pageNumber === undefined) {
      return failPage(404, "Not found", `This session has no retained turn ${String(turn)}.`)
    }
    const turns = turnPage(table, inspection.fileLen, pageNumber)
    if (turns === undefined) return failPage(404, "Not found", `This session has no turns page ${pageNumber}.`)
    const records = yield* Stream.runCollect(reader.records(id, turns.start, turns.stop))
    // A session a process holds, or one not finished yet (a writer may flush more): the last page
    // follows it, where the source can follow.
    const live = reader.follow !== undefined &&
      (inspection.live || inspection.effectiveManifest.status === "active") && turns.page === turns.pages
    const nextTurn = table.length === 0 ? 1 : table.turnAt(table.length - 1) + 1
    return htmlPage(renderSessionPage(inspection, id, turns, records, live ? { nextTurn } : undefined))
  })

/** `/s/<id>/event/<offset>`: the whole event whose line starts at `offset`. */
const eventView = (reader: ServeReader, id: string, offset: number) =>
  Effect.gen(function*() {
    const first = yield* reader.eventAt(id, offset)
    if (Option.isNone(first) || first.value._tag !== "Event") {
      return failPage(404, "Not found", `No event starts at byte ${offset} of this session's log.`)
    }
    return htmlPage(renderEventPage(first.value.event, id, offset, EVENT_PAGE_CHARS))
  })

/** `/s/<id>/live?from=<offset>&turn=<n>`: server-sent events, one per event flushed after `from`. */
const liveView = (reader: ServeReader, id: string, params: URLSearchParams) =>
  Effect.gen(function*() {
    const from = intParam(params, "from")
    const turn = intParam(params, "turn")
    if (from instanceof BadParameter) return yield* Effect.fail(from)
    if (turn instanceof BadParameter) return yield* Effect.fail(turn)
    if (reader.follow === undefined) {
      return failPage(404, "Not found", "This server cannot follow a session live; reload the page for new turns.")
    }
    const followed = yield* reader.follow(id)
    const start = from ?? followed.size
    if (start > followed.size) {
      return yield* Effect.fail(
        new BadParameter({ detail: `from ${start} is beyond the end of the log (${followed.size} bytes)` })
      )
    }
    const body = liveStream(id, followed.records(start), turn ?? 1).pipe(Stream.catch(() => Stream.empty))
    return secured(HttpServerResponse.stream(body, { contentType: "text/event-stream; charset=utf-8" }))
  })

/** The parts of a request URL, or none when it cannot be parsed. */
const parseUrl = (url: string): URL | undefined => {
  const parsed = Result.try(() => new URL(url, "http://logbook.invalid"))
  return Result.isSuccess(parsed) ? parsed.success : undefined
}

/**
 * The whole app: the guard (method, `Host`, token), then the routes. Never fails: every error is
 * its page.
 */
export const serveApp = (config: ServeConfig) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.method !== "GET") {
      return HttpServerResponse.setHeader(
        failPage(405, "Method not allowed", "This server is read-only: it answers GET requests only."),
        "allow",
        "GET"
      )
    }
    const host = request.headers["host"] ?? ""
    if (!config.allowedHost(host)) {
      return failPage(403, "Forbidden", "This Host is not the address logbook serve is bound to.")
    }
    const url = parseUrl(request.url)
    if (url === undefined) return failPage(400, "Bad request", "The request URL could not be parsed.")
    const given = url.searchParams.get("token")
    if (given !== null) {
      if (!tokenMatches(given, config.token)) {
        return failPage(403, "Forbidden", "This token is not the one logbook serve printed for this run.")
      }
      url.searchParams.delete("token")
      const rest = url.searchParams.toString()
      return secured(
        HttpServerResponse.redirect(`${url.pathname}${rest === "" ? "" : `?${rest}`}${url.hash}`, {
          status: 303,
          headers: { "set-cookie": `${TOKEN_COOKIE}=${config.token}; HttpOnly; SameSite=Strict; Path=/` }
        })
      )
    }
    const cookie = request.cookies[TOKEN_COOKIE] ?? ""
    if (!tokenMatches(cookie, config.token)) {
      return failPage(
        403,
        "Forbidden",
        "Open the URL logbook serve printed (it carries ?token=…); the token is then kept in a cookie for this run."
      )
    }
    return yield* route(config, url.pathname, url.searchParams).pipe(
      Effect.catch((error) => Effect.succeed(failureResponse(error))),
      Effect.catchDefect((defect) => Effect.succeed(failPage(500, "Could not read this page", messageOf(defect))))
    )
  })
