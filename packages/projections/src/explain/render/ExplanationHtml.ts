/**
 * The HTML report of an explanation (docs/explain.md#the-html-report): one self-contained document
 * that a person can open from disk or attach to a review. No script, no external resource, a
 * Content-Security-Policy that forbids both (`default-src 'none'; style-src 'unsafe-inline';
 * img-src data:`), and every recorded string HTML-escaped. It shows the goals, changes, the turn
 * timeline, failures, plan evolution, decisions, verification with freshness, review-first
 * items, the agent tree, usage and cost, an inline SVG timeline of operations (actors as lanes,
 * failures marked), the action/file graph and, when given, the transcript — each turn's prompt,
 * messages, reasoning (collapsed), commands with exit code and output (collapsed), tool calls and
 * diffs — with a table of contents by turn; evidence links jump to the transcript entry holding
 * their record. Readable on a phone: tables scroll sideways inside their section, evidence cells
 * show a short reference (the full one in the tooltip).
 */
import type { ExplanationEntry, ExplanationModel, Transcript, TranscriptEntry, TranscriptTurn } from "@logbook/domain"
import { publicText } from "@logbook/domain"
import { evidenceLink, shortEvidence } from "./ExplanationText.ts"

/** The report's Content-Security-Policy. */
export const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

/** Escapes `& < > " '` for HTML text and attribute values. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/gu, (c) => ESCAPES[c] ?? c)

const h = escapeHtml

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:18px 28px}
header h1{margin:0 0 4px;font-size:20px}
header p{margin:0;color:#c7cbd4;font-size:13px}
main{padding:12px 28px 40px;max-width:1200px}
section{background:#fff;border:1px solid #dde1e8;border-radius:6px;margin:14px 0;padding:10px 16px}
h2{font-size:16px;margin:6px 0 8px}
table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:3px 8px;border-bottom:1px solid #eef0f3;vertical-align:top;font-size:13px}
th{color:#596170;font-weight:600}
code,.ev{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.ev{color:#6b7280;word-break:break-all}
.st-failed,.st-denied,.st-error,.st-blocked,.st-failed-or-denied{color:#b42318;font-weight:600}
.st-passed,.st-completed{color:#067647}
.st-pending,.st-in-progress,.st-unconfirmed{color:#b54708}
.st-cancelled{color:#475467;font-style:italic}
.high{color:#b42318;font-weight:600}.medium{color:#b54708}
.empty{color:#6b7280;font-style:italic}
ul.tree{margin:0;padding-left:18px}
svg text{font:11px system-ui,sans-serif;fill:#1d2330}
pre{white-space:pre-wrap;word-break:break-all;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace;background:#f6f7f9;padding:8px;margin:4px 0 12px}
.scroll{overflow-x:auto}
td{overflow-wrap:anywhere}
nav.toc{font-size:13px;margin:8px 0}nav.toc a{margin-right:10px;display:inline-block;max-width:100%;overflow-wrap:anywhere}
article.turn{border-top:1px solid #dde1e8;padding:8px 0}
article.turn h3{font-size:14px;margin:4px 0}
.prompt{background:#eef4ff;border-left:3px solid #2e90fa;padding:6px 10px;white-space:pre-wrap;overflow-wrap:anywhere}
.msg{white-space:pre-wrap;overflow-wrap:anywhere;margin:6px 0}
.entry{margin:6px 0}.entry code{overflow-wrap:anywhere}
details summary{cursor:pointer;color:#596170;font-size:13px}
.add{color:#067647}.del{color:#b42318}.hunk{color:#6b7280}
:target{outline:2px solid #f79009}
@media (max-width:640px){main{padding:8px 10px 30px}header{padding:12px}section{padding:8px 10px}td,th{padding:3px 4px}}
`

const statusClass = (status: string) => `st-${status.toLowerCase().replace(/[^a-z]+/gu, "-").replace(/^-|-$/gu, "")}`

/** Renders an evidence cell: a link to the embedded line when the report carries it, else the reference. */
type EvidenceCell = (e: ExplanationEntry) => string

/**
 * Evidence cells link to the transcript entry holding the record when there is one, else to the
 * embedded line; they show the short reference (`@offset:digest`) with the full link as tooltip,
 * so the column stays narrow on real sessions.
 */
const evidenceCell = (embedded: ReadonlySet<number>, entries: ReadonlySet<number>): EvidenceCell => (e) => {
  const full = h(evidenceLink(e.evidence))
  const shown = h(shortEvidence(e.evidence))
  if (entries.has(e.evidence.offset)) {
    return `<a class="ev" href="#entry-${e.evidence.offset}" title="${full}">${shown}</a>`
  }
  return embedded.has(e.evidence.offset)
    ? `<a class="ev" href="#evidence-${e.evidence.offset}" title="${full}">${shown}</a>`
    : `<span class="ev" title="${full}">${shown}</span>${
      embedded.size > 0 ? " <span class=\"empty\">(evidence unavailable in this report)</span>" : ""
    }`
}

const section = (id: string, title: string, body: string) =>
  `<section id="${id}" data-section="${id}"><h2>${h(title)}</h2>\n${body}\n</section>`

const empty = (text: string) => `<p class="empty">${h(text)}</p>`

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, none: string) =>
  rows.length === 0
    ? empty(none)
    : `<div class="scroll"><table><thead><tr>${header.map((c) => `<th>${h(c)}</th>`).join("")}</tr></thead><tbody>\n${
      rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("\n")
    }\n</tbody></table></div>`

const status = (s: string) => `<span class="${statusClass(s)}">${h(s)}</span>`

const entryRows = (xs: ReadonlyArray<ExplanationEntry>, ev: EvidenceCell) =>
  xs.map((e) => [h(e.label), status(e.status), h(e.actor_id ?? ""), h(e.timestamp ?? ""), ev(e)])

const isFailure = (s: string) => s.includes("fail") || s === "denied" || s === "error" || s === "blocked"

/** The inline SVG timeline: one mark per recorded operation, actors as lanes, failures as crosses. */
const timelineSvg = (model: ExplanationModel): string => {
  const ops = [...model.actions, ...model.edits].sort((a, b) => a.evidence.offset - b.evidence.offset)
  const lanes = [...new Set(ops.map((o) => o.actor_id ?? "(unrecorded actor)"))]
  const times = ops.map((o) => (o.timestamp === null ? Number.NaN : Date.parse(o.timestamp)))
  const byTime = ops.length > 1 && times.every((t) => Number.isFinite(t)) && new Set(times).size > 1
  const xs = byTime ? times : ops.map((o) => o.evidence.offset)
  const min = xs.length === 0 ? 0 : Math.min(...xs)
  const max = xs.length === 0 ? 1 : Math.max(...xs)
  const left = 170
  const width = 1000
  const laneHeight = 34
  const height = 40 + lanes.length * laneHeight
  const x = (v: number) => left + (max === min ? 0 : ((v - min) / (max - min)) * (width - left - 20))
  const parts: Array<string> = []
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Recorded execution timeline" width="100%" height="${height}" preserveAspectRatio="xMinYMin meet" viewBox="0 0 ${width} ${height}">`
  )
  lanes.forEach((lane, i) => {
    const y = 20 + i * laneHeight
    parts.push(
      `<g class="lane"><text x="6" y="${y + 16}">${h(lane.length > 26 ? `${lane.slice(0, 25)}…` : lane)}</text>` +
        `<line x1="${left}" y1="${y + 12}" x2="${width - 10}" y2="${y + 12}" stroke="#dde1e8"/></g>`
    )
  })
  // Turn starts as vertical rules (a failed or blocked turn in red), behind the operation marks.
  for (const t of model.turns) {
    const at = byTime ? (t.timestamp === null ? Number.NaN : Date.parse(t.timestamp)) : t.evidence.offset
    if (!Number.isFinite(at)) continue
    const tx = x(Math.min(Math.max(at, min), max)).toFixed(1)
    const colour = isFailure(t.status) ? "#b42318" : "#98a2b3"
    parts.push(
      `<g class="turn" data-status="${h(t.status)}"><title>${h(`${t.label} [${t.status}]`)}</title>` +
        `<line x1="${tx}" y1="8" x2="${tx}" y2="${height - 18}" stroke="${colour}" stroke-dasharray="3 3"/>` +
        `<text x="${tx}" y="8" dx="3" dy="6">${h(t.label)}</text></g>`
    )
  }
  ops.forEach((o, i) => {
    const lane = lanes.indexOf(o.actor_id ?? "(unrecorded actor)")
    const cx = x(xs[i] ?? 0).toFixed(1)
    const cy = 20 + lane * laneHeight + 12
    const failed = isFailure(o.status)
    const title = `<title>${h(`${o.kind}: ${o.label} [${o.status}] at byte ${o.evidence.offset}`)}</title>`
    parts.push(
      failed
        ? `<g class="op op-failed" data-status="${
          h(o.status)
        }">${title}<path d="M${cx} ${cy} m-6 -6 l12 12 m0 -12 l-12 12" stroke="#b42318" stroke-width="3"/></g>`
        : `<g class="op" data-status="${h(o.status)}">${title}<circle cx="${cx}" cy="${cy}" r="6" fill="${
          o.kind === "edit" ? "#2e90fa" : "#12b76a"
        }"/></g>`
    )
  })
  parts.push(
    `<text x="${left}" y="${height - 6}">${byTime ? "recorded time →" : "recorded order (byte offset) →"}</text></svg>`
  )
  return parts.join("\n")
}

const agentTree = (model: ExplanationModel): string => {
  if (model.agents.length === 0) return empty("No agent identities recorded.")
  const children = new Map<string | null, Array<string>>()
  const known = new Set(model.agents.map((a) => a.actor_id))
  for (const a of model.agents) {
    const parent = a.parent_actor_id !== null && known.has(a.parent_actor_id) ? a.parent_actor_id : null
    children.set(parent, [...(children.get(parent) ?? []), a.actor_id])
  }
  const render = (parent: string | null, depth: number): string => {
    const kids = children.get(parent) ?? []
    if (kids.length === 0 || depth > 32) return ""
    return `<ul class="tree">${kids.map((k) => `<li>${h(k)}${render(k, depth + 1)}</li>`).join("")}</ul>`
  }
  return render(null, 0)
}

/** One embedded evidence line: its reference and (a page of) its redacted text. */
export interface EmbeddedEvidence {
  readonly reference: { readonly session_id: string; readonly offset: number; readonly digest: string }
  readonly text: string
  readonly next_offset: number | null
}

/**
 * The workspace as it is when the report is written (read from Git by the caller): the status
 * and diff text, or why they are unavailable. Not evidence: nothing says the agent made it.
 */
export interface WorkspaceSnapshot {
  readonly directory: string
  readonly status: string
  readonly diff: string
  /** Whether the diff was cut at the capture bound. */
  readonly truncated: boolean
  /** Why no snapshot could be read (not a Git work tree, git missing, timeout); null when read. */
  readonly unavailable: string | null
}

/** The most characters of a workspace diff the report shows. */
export const WORKSPACE_DIFF_LIMIT = 8192

/** A diff with added, removed and hunk-header lines marked for colour. */
const diffHtml = (diff: string): string =>
  diff.split("\n").map((line) => {
    const cls = line.startsWith("+++") || line.startsWith("---")
      ? "hunk"
      : line.startsWith("+")
      ? "add"
      : line.startsWith("-")
      ? "del"
      : line.startsWith("@@")
      ? "hunk"
      : ""
    return cls === "" ? h(line) : `<span class="${cls}">${h(line)}</span>`
  }).join("\n")

const anchors = (offsets: ReadonlyArray<number>) => offsets.map((o) => `<span id="entry-${o}"></span>`).join("")

const entryHtml = (e: TranscriptEntry): string => {
  const head = anchors(e.offsets)
  const st = e.status === null ? "" : ` ${status(e.status)}`
  const exit = e.exitCode === null
    ? ""
    : ` <span class="${e.exitCode === 0 ? "st-passed" : "st-failed"}">exit ${e.exitCode}</span>`
  const collapsed = (summary: string, text: string, open = false) =>
    text.length === 0
      ? ""
      : `<details${open ? " open" : ""}><summary>${h(summary)}</summary><pre>${text}</pre></details>`
  switch (e.kind) {
    case "message":
      return `<div class="entry msg" data-kind="message">${head}${h(e.text)}</div>`
    case "reasoning":
      return `<div class="entry" data-kind="reasoning">${head}${collapsed("Reasoning", h(e.text))}</div>`
    case "command":
      return `<div class="entry" data-kind="command">${head}<code>$ ${h(e.title)}</code>${st}${exit}${
        collapsed("Output", h(e.text))
      }</div>`
    case "tool":
      return `<div class="entry" data-kind="tool">${head}<code>${h(e.title)}</code>${st}${exit}${
        collapsed("Output", h(e.text))
      }</div>`
    case "edit":
      return `<div class="entry" data-kind="edit">${head}Edited <code>${h(e.title)}</code>${st}${
        e.text.length === 0
          ? " <span class=\"empty\">(diff not recorded)</span>"
          : collapsed("Diff", diffHtml(e.text), true)
      }</div>`
    case "error":
      return `<div class="entry st-error" data-kind="error">${head}${h(e.text)}</div>`
  }
}

/** A prompt (already redacted) cut to the start a table of contents shows. */
const tocText = (prompt: string): string => {
  const flat = prompt.replace(/\s+/gu, " ").trim()
  const chars = [...flat]
  return chars.length <= 48 ? flat : `${chars.slice(0, 47).join("")}…`
}

const turnTitle = (t: TranscriptTurn) => t.index === 0 ? "Before the first turn" : `Turn ${t.index}`

const transcriptSection = (transcript: Transcript): string => {
  const turns = transcript.turns.filter((t) => t.index > 0 || t.entries.length > 0)
  if (turns.length === 0) return empty("No turns recorded.")
  const toc = `<nav class="toc" aria-label="Turns">${
    turns.map((t) =>
      `<a href="#turn-${t.index}">${h(turnTitle(t))}${t.prompt === null ? "" : `: ${h(tocText(t.prompt))}`}</a>`
    ).join(" ")
  }</nav>`
  const body = turns.map((t) =>
    `<article class="turn" id="turn-${t.index}">${t.offset === null ? "" : anchors([t.offset])}<h3>${
      h(`${turnTitle(t)}${t.timestamp === null ? "" : ` · ${t.timestamp}`}${t.status === "" ? "" : ` · ${t.status}`}`)
    }</h3>${t.prompt === null ? "" : `<div class="prompt" data-kind="prompt">${h(t.prompt)}</div>`}\n${
      t.entries.map(entryHtml).join("\n")
    }</article>`
  ).join("\n")
  const omitted = transcript.omittedEntries === 0
    ? ""
    : `<p class="empty">${transcript.omittedEntries} later entries omitted (the report's transcript is bounded); ` +
      "`logbook events` prints them all.</p>"
  return toc + body + omitted
}

/** The record offsets a transcript holds (evidence links to them jump to their entry). */
const transcriptOffsets = (transcript: Transcript | undefined): Set<number> => {
  const out = new Set<number>()
  for (const t of transcript?.turns ?? []) {
    if (t.offset !== null) out.add(t.offset)
    for (const e of t.entries) for (const o of e.offsets) out.add(o)
  }
  return out
}

/** Options of {@link renderHtml}. */
export interface HtmlOptions {
  /** Evidence lines to embed (as `logbook evidence` pages them); entries citing them link to `#evidence-<offset>`. */
  readonly evidence?: ReadonlyArray<EmbeddedEvidence>
  /** A current-workspace section, marked as not evidence of agent ownership. */
  readonly workspace?: WorkspaceSnapshot
  /** The session's transcript (`queryTranscript`), shown with a table of contents by turn. */
  readonly transcript?: Transcript
  /**
   * Where an evidence reference links to, when the report is served beside the log (`logbook
   * serve` links each one to the event in its session view); escaped here. Wins over `evidence`.
   */
  readonly evidenceHref?: (reference: ExplanationEntry["evidence"]) => string
  /** A link shown in the header (back to the page the report was opened from); both escaped here. */
  readonly backLink?: { readonly href: string; readonly label: string }
}

const workspaceSection = (w: WorkspaceSnapshot): string =>
  `<p class="empty">The workspace as it was when this report was written, read with git in <code>${
    h(publicText(w.directory, 900))
  }</code>. It is not evidence of what the agent did: anyone may have changed these files.</p>` +
  (w.unavailable !== null
    ? `<p>Workspace snapshot unavailable: ${h(publicText(w.unavailable))}</p>`
    : `<pre>${h(publicText(w.status, WORKSPACE_DIFF_LIMIT)) || "(clean: no changes)"}</pre>` +
      (w.diff.length === 0 ? "" : `<pre>${h(publicText(w.diff, WORKSPACE_DIFF_LIMIT))}</pre>`) +
      (w.truncated ? "<p class=\"empty\">Diff cut at the capture bound.</p>" : ""))

/**
 * Renders the whole report as one HTML document. Evidence pages passed in `options` are embedded
 * (escaped) with anchors `#evidence-<offset>`; when some are embedded, facts whose line is not
 * say "(evidence unavailable in this report)".
 */
export const renderHtml = (model: ExplanationModel, options: HtmlOptions = {}): string => {
  const pages = (options.evidence ?? []).filter((p) => p.reference.session_id === model.session_id)
  const hrefOf = options.evidenceHref
  const ev: EvidenceCell = hrefOf === undefined
    ? evidenceCell(new Set(pages.map((p) => p.reference.offset)), transcriptOffsets(options.transcript))
    : (e) =>
      `<a class="ev" href="${h(hrefOf(e.evidence))}" title="${h(evidenceLink(e.evidence))}">${
        h(shortEvidence(e.evidence))
      }</a>`
  const goal = model.goals[model.goals.length - 1]
  const c = model.completeness
  const u = model.usage
  const sections = [
    section(
      "goals",
      "Goals",
      table(["Goal", "Recorded", "Actor", "Time", "Evidence"], entryRows(model.goals, ev), "No goal recorded.")
    ),
    section(
      "changes",
      "Captured changes",
      `<p>${model.changes.length} distinct files; ${model.edit_operations} edit operations.</p>` +
        table(
          ["Path", "First hunk line", "Evidence"],
          model.changes.map((e) => [`<code>${h(e.path ?? e.label)}</code>`, h(String(e.line ?? "")), ev(e)]),
          "No successful file changes recorded."
        )
    ),
    section(
      "turns",
      "Timeline",
      table(
        ["Turn", "Actor", "Time", "Evidence"],
        model.turns.map((t) => [h(t.label), h(t.actor_id ?? ""), h(t.timestamp ?? ""), ev(t)]),
        "No turns recorded."
      )
    ),
    section(
      "actions",
      "Actions",
      table(["Action", "Status", "Actor", "Time", "Evidence"], entryRows(model.actions, ev), "No actions recorded.")
    ),
    section(
      "failures",
      "Failures",
      table(["What", "Status", "Actor", "Time", "Evidence"], entryRows(model.failures, ev), "No failures recorded.")
    ),
    section(
      "plan",
      "Plan evolution",
      table(["Step", "Status", "Actor", "Time", "Evidence"], entryRows(model.plan_evolution, ev), "No plan recorded.")
    ),
    section(
      "decisions",
      "Decisions",
      table(
        ["Decision (agent-reported)", "Rationale", "Alternatives", "Evidence"],
        model.decisions.map((d) => [h(d.fact.label), h(d.rationale), h(d.alternatives.join("; ")), ev(d.fact)]),
        "Public rationale unavailable."
      )
    ),
    section(
      "verification",
      "Verification",
      table(
        ["Check", "Status", "Exit code", "Fresh", "Evidence"],
        model.verification.map((v) => [
          h(v.fact.label),
          status(v.status),
          h(v.exit_code === null ? "not recorded" : String(v.exit_code)),
          v.fresh ? "fresh" : v.status === "passed" ? "before a later mutation attempt" : "no",
          ev(v.fact)
        ]),
        "No verification command recorded."
      )
    ),
    section(
      "review",
      "Review first",
      table(
        ["Priority", "Reason", "Where", "Evidence"],
        model.review_priorities.map((r) => [
          `<span class="${r.priority}">${h(r.priority)}</span>`,
          h(r.reason),
          `<code>${h(r.fact.path ?? r.fact.label)}</code>`,
          ev(r.fact)
        ]),
        "No review signal recorded; this is not a coverage assessment."
      )
    ),
    ...(options.transcript === undefined
      ? []
      : [section("transcript", "Transcript", transcriptSection(options.transcript))]),
    section("agents", "Agent tree", agentTree(model)),
    section(
      "usage",
      "Usage and cost",
      `<p>${
        u === null
          ? "Usage not recorded."
          : h(
            `${u.input_tokens} input tokens (${u.cached_input_tokens} cached, ${u.cache_creation_tokens} cache writes), ${u.output_tokens} output tokens.`
          )
      } ${model.cost_usd === null ? "Cost not recorded for this scope." : h(`Cost: $${model.cost_usd}.`)}</p>` +
        table(
          ["Turn", "Breakdown", "Evidence"],
          model.token_breakdowns.map((t) => [
            h(t.fact.label),
            h(Object.entries(t.breakdown).map(([k, v]) => `${k}=${v}`).join(", ")),
            ev(t.fact)
          ]),
          "No token breakdown recorded."
        )
    ),
    section("execution", "Recorded execution", timelineSvg(model)),
    section(
      "graph",
      "Recorded action and file graph",
      table(
        ["From", "Relation", "To"],
        model.graph.map((e) => [`<code>${h(e.from)}</code>`, h(e.relation), `<code>${h(e.to)}</code>`]),
        "No recorded operations."
      )
    ),
    ...(pages.length === 0 ? [] : [
      section(
        "evidence",
        "Evidence",
        pages.map((p) =>
          `<div id="evidence-${p.reference.offset}"><p class="ev">${
            h(`logbook-evidence:${p.reference.session_id}:${p.reference.offset}:${p.reference.digest}`)
          }${p.next_offset === null ? "" : " (first page only)"}</p><pre>${h(p.text)}</pre></div>`
        ).join("\n")
      )
    ]),
    ...(options.workspace === undefined
      ? []
      : [section("workspace", "Current workspace (not evidence)", workspaceSection(options.workspace))]),
    section(
      "completeness",
      "Completeness",
      `<p>${
        h(
          `Evidence: ${c.malformed_records} malformed, ${c.unknown_records} unknown, ${c.legacy_records} legacy records, ${c.evicted_turns} evicted turns.`
        )
      }</p>` +
        (c.warnings.length === 0 ? "" : `<ul>${c.warnings.map((w) => `<li>Unavailable: ${h(w)}</li>`).join("")}</ul>`) +
        `<p class="empty">Evidence links name a line of events.jsonl by byte offset and SHA-256; ` +
        `show one with <code>logbook evidence &lt;session&gt; &lt;offset&gt; &lt;digest&gt;</code>.</p>`
    )
  ]
  return [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">`,
    `<meta name="referrer" content="no-referrer">`,
    `<title>${h(`Logbook explanation: ${model.session_id}`)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<header><h1>${h(goal === undefined ? `Session ${model.session_id}` : goal.label)}</h1>`,
    `<p>${
      h(
        `Session ${model.session_id} · ${model.scope} scope${
          model.task_id === null ? "" : ` (task ${model.task_id})`
        } · status: ${model.status} · revision ${model.revision.slice(0, 16)}`
      )
    }</p>${
      options.backLink === undefined
        ? ""
        : `<p><a style="color:#fff" href="${h(options.backLink.href)}">${h(options.backLink.label)}</a></p>`
    }</header>`,
    "<main>",
    `<nav class="toc" aria-label="Sections">${
      [
        ["goals", "Goals"],
        ["changes", "Changes"],
        ["verification", "Verification"],
        ["review", "Review first"],
        ...(
          options.transcript === undefined ? [] : [["transcript", "Transcript"]]
        ),
        ["failures", "Failures"],
        ["completeness", "Completeness"]
      ].map(([id, title]) => `<a href="#${id ?? ""}">${h(title ?? "")}</a>`).join(" ")
    }</nav>`,
    ...sections,
    "</main></body></html>",
    ""
  ].join("\n")
}
