/**
 * The HTML vocabulary of `logbook serve`: the page shell (navigation, the shipped stylesheet and
 * script, nothing from the network), escaping of recorded text and the links between pages. Every
 * recorded string reaches a page through {@link shown} or {@link shownBlock}: redacted as
 * `explain` redacts, control characters (ANSI escapes included) dropped, bounded, then
 * HTML-escaped; no recorded value is ever put in a URL scheme position, only in escaped path
 * segments and query values.
 */
import { publicText } from "@logbook/domain"
import { escapeHtml } from "@logbook/projections"

/** Escapes `& < > " '`: the one escaper of every page (the explain report's). */
export const h = escapeHtml

/** Longest recorded label shown inline (a goal, a command line). */
export const LABEL_CHARS = 300

/** Longest block of recorded text (an output, a message) a page shows before offering the full text. */
export const BLOCK_CHARS = 8192

/** Recorded text for a label: redacted, control characters dropped, cut at `limit`, escaped. */
export const shown = (text: string, limit: number = LABEL_CHARS): string => h(publicText(text, limit))

/** Recorded text for a block: as {@link shown}, and whether it was cut. */
export const shownBlock = (
  text: string,
  limit: number = BLOCK_CHARS
): { readonly html: string; readonly cut: boolean } => {
  const safe = publicText(text, limit)
  return { html: h(safe), cut: text.length > limit }
}

/** A path segment for a session id (ids come from directory names: encoded, never trusted). */
export const seg = (id: string): string => encodeURIComponent(id)

/** The session page, optionally at the turn page holding byte `offset`, scrolled to that event. */
export const sessionHref = (id: string, offset?: number): string =>
  offset === undefined ? `/s/${seg(id)}` : `/s/${seg(id)}?at=${offset}#ev-${offset}`

/** A query string from parameters, omitting empty ones; escaped for an attribute. */
export const queryHref = (path: string, params: Readonly<Record<string, string | number | undefined>>): string => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v))
  const s = q.toString()
  return h(s.length === 0 ? path : `${path}?${s}`)
}

/** The Content-Security-Policy of every page but the explanation report: only this server's own files. */
export const PAGE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** One whole page: `title` is plain text (escaped here), `body` already-safe HTML. */
export const page = (title: string, active: "sessions" | "search" | "usage" | "session", body: string): string =>
  [
    "<!DOCTYPE html>",
    "<html lang=\"en\"><head><meta charset=\"utf-8\">",
    "<meta name=\"referrer\" content=\"no-referrer\">",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">",
    `<title>${h(title)} · Logbook</title>`,
    "<link rel=\"stylesheet\" href=\"/assets/app.css\">",
    "<script src=\"/assets/app.js\" defer></script>",
    "</head><body>",
    `<nav class="top"><a class="brand" href="/">Logbook</a>`,
    `<a href="/"${active === "sessions" ? " class=\"on\"" : ""}>Sessions</a>`,
    `<a href="/search"${active === "search" ? " class=\"on\"" : ""}>Search</a>`,
    `<a href="/usage"${active === "usage" ? " class=\"on\"" : ""}>Usage</a></nav>`,
    body,
    "</body></html>",
    ""
  ].join("\n")

/** The body of an error page: what went wrong and what to do, no internals. */
export const errorPage = (status: number, title: string, detail: string): string =>
  page(
    title,
    "sessions",
    `<main class="narrow"><h1>${h(`${status} ${title}`)}</h1><p>${h(detail)}</p>` +
      `<p><a href="/">Back to the sessions</a></p></main>`
  )
