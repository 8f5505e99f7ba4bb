/**
 * Text renderings of an explanation model (docs/explain.md#what-an-explanation-contains): a Markdown summary of at
 * most 20 lines in five sections (Goal, Changes, Decisions, Verification, Review first), the
 * details with every list, and a plain diagram hard-wrapped to a width. Every recorded string
 * in the model was already redacted and bounded by the reducer; the Markdown summary also escapes
 * Markdown so recorded text cannot become links or markup, and the plain-text summary (for a
 * terminal) prints recorded text as is with short evidence references a person can copy into
 * `logbook evidence`.
 */
import type { EvidenceRef, ExplanationEntry, ExplanationModel, VerificationEntry } from "@logbook/domain"

/** The link form of an evidence reference: `logbook-evidence:<session>:<offset>:<digest>`. */
export const evidenceLink = (e: EvidenceRef): string => `logbook-evidence:${e.session_id}:${e.offset}:${e.digest}`

const MARKDOWN_SPECIAL = /[\\`*_{}[\]()<>#+\-.!|~]/gu

/** Escapes Markdown: a backslash before each of `` \ ` * _ { } [ ] ( ) < > # + - . ! | ~ ``. */
export const escapeMarkdown = (text: string): string => text.replace(MARKDOWN_SPECIAL, (c) => `\\${c}`)

/** The most lines {@link renderSummary} prints. */
export const SUMMARY_MAX_LINES = 20

/** Hex digits of the digest in a short evidence reference (`logbook evidence` accepts a prefix this long). */
export const SHORT_DIGEST_CHARS = 12

/**
 * The short form of an evidence reference for a terminal: `@<offset>:<first 12 digest hex>`,
 * which `logbook evidence <session> <offset> <digest prefix>` accepts (the offset pins the line,
 * the prefix still detects a changed one).
 */
export const shortEvidence = (e: EvidenceRef): string => `@${e.offset}:${e.digest.slice(0, SHORT_DIGEST_CHARS)}`

/** How a summary is written: Markdown (escaped, for pasting into a PR) or plain text (a terminal). */
export type SummaryFormat = "markdown" | "text"

/** The pieces of a summary that differ by format. */
interface Style {
  readonly heading: (title: string) => string
  readonly text: (s: string) => string
  readonly link: (e: EvidenceRef) => string
  readonly code: (s: string) => string
}

const STYLES: Readonly<Record<SummaryFormat, Style>> = {
  markdown: {
    heading: (title) => `## ${title}`,
    text: (s) => escapeMarkdown(flat(s)),
    link: (e) => `[evidence](${evidenceLink(e)})`,
    code: (s) => `\`${s}\``
  },
  text: {
    heading: (title) => `${title}:`,
    text: (s) => flat(s),
    link: shortEvidence,
    code: (s) => s
  }
}

const checkLine = (v: VerificationEntry, md: (s: string) => string) =>
  `${md(v.fact.label)}: ${v.status}${v.exit_code === null || v.status === "passed" ? "" : ` (exit ${v.exit_code})`}${
    v.status === "passed" && !v.fresh ? " (before a later mutation attempt)" : ""
  }`

const flat = (text: string) => text.replace(/\s*\n\s*/gu, " ")

const failed = (status: string) => status.includes("fail") || status === "denied"

/**
 * One line on the recorded actions (commands, tool calls): how many, how many failed, and the
 * most relevant one, the latest failed action when any failed, else the latest action.
 */
const actionsLine = (
  actions: ReadonlyArray<ExplanationEntry>,
  md: (s: string) => string,
  link: (e: EvidenceRef) => string
): string => {
  const failures = actions.filter((a) => failed(a.status))
  const shown = failures[failures.length - 1] ?? actions[actions.length - 1]
  const head = `Actions: ${actions.length} recorded, ${failures.length} failed`
  return shown === undefined
    ? `${head}.`
    : `${head}; ${failures.length > 0 ? "latest failed" : "latest"}: ${md(shown.label)} [${shown.status}] ${
      link(shown.evidence)
    }`
}

/**
 * The summary: exactly the five sections, at most 20 lines, with evidence links — Markdown-escaped
 * with `logbook-evidence:` links by default, or plain text with short references (`text`).
 */
export const renderSummary = (model: ExplanationModel, format: SummaryFormat = "markdown"): string => {
  const { code, heading, link, text: md } = STYLES[format]
  const lines: Array<string> = []
  let omitted = 0
  const goal = model.goals[model.goals.length - 1]
  lines.push(heading("Goal"))
  lines.push(
    goal === undefined
      ? `No goal recorded; status: ${model.status}.`
      : `${md(goal.label)} — ${model.status} ${link(goal.evidence)}`
  )
  omitted += Math.max(0, model.goals.length - 1)

  lines.push(heading("Changes"))
  lines.push(`${model.changes.length} distinct files; ${model.edit_operations} edit operations.`)
  if (model.changes.length === 0) lines.push("No successful file changes recorded.")
  for (const c of model.changes.slice(0, 2)) {
    lines.push(`- ${md(c.path ?? c.label)}${c.line === null ? "" : `:${c.line}`} ${link(c.evidence)}`)
  }
  if (model.actions.length > 0) lines.push(actionsLine(model.actions, md, link))
  omitted += Math.max(0, model.changes.length - 2)

  lines.push(heading("Decisions"))
  const decision = model.decisions[0]
  lines.push(
    decision === undefined
      ? "Public rationale unavailable."
      : `${md(decision.fact.label)} — ${md(decision.rationale)} (agent-reported) ${link(decision.fact.evidence)}`
  )
  omitted += Math.max(0, model.decisions.length - 1)

  lines.push(heading("Verification"))
  if (model.verification.length === 0) lines.push("No verification command recorded.")
  for (const v of model.verification.slice(-2)) lines.push(`- ${checkLine(v, md)} ${link(v.fact.evidence)}`)
  omitted += Math.max(0, model.verification.length - 2)

  lines.push(heading("Review first"))
  if (model.review_priorities.length === 0) {
    lines.push("No review signal recorded; this is not a coverage assessment.")
  }
  for (const r of model.review_priorities.slice(0, 2)) {
    lines.push(`- ${r.priority}: ${md(r.reason)} — ${md(r.fact.path ?? r.fact.label)} ${link(r.fact.evidence)}`)
  }
  omitted += Math.max(0, model.review_priorities.length - 2)

  const latestFailure = model.failures[model.failures.length - 1]
  if (latestFailure !== undefined) {
    lines.push(`Failures: ${model.failures.length} recorded; latest: ${md(latestFailure.label)}`)
  }
  const c = model.completeness
  lines.push(
    `Evidence: ${c.malformed_records} malformed, ${c.unknown_records} unknown, ${c.legacy_records} legacy, ${c.evicted_turns} evicted turns.`
  )
  if (omitted > 0) {
    lines.push(`${omitted} ${omitted === 1 ? "entry" : "entries"} omitted; use ${code("logbook explain --details")}.`)
  }
  if (c.warnings.length > 0) lines.push(`Unavailable: ${c.warnings.map(md).join("; ")}.`)
  if (format === "text") lines.push(`Evidence @OFFSET:DIGEST: logbook evidence ${model.session_id} OFFSET DIGEST`)
  return lines.slice(0, SUMMARY_MAX_LINES).join("\n") + "\n"
}

const entryLine = (e: ExplanationEntry): string =>
  `- ${flat(e.label)}${e.path !== null && e.path !== e.label ? ` (${e.path})` : ""}${
    e.line === null ? "" : `:${e.line}`
  } [${e.status}]${e.actor_id === null ? "" : ` by ${e.actor_id}`} ${evidenceLink(e.evidence)}`

/** The details: the summary's facts without Markdown escaping, plus every list with evidence links. */
export const renderDetails = (model: ExplanationModel): string => {
  const out: Array<string> = []
  const section = (title: string, rows: ReadonlyArray<string>, empty: string) => {
    out.push(`${title} (${rows.length})`)
    if (rows.length === 0) out.push(`  ${empty}`)
    for (const r of rows) out.push(`  ${r}`)
    out.push("")
  }
  out.push(
    `Session ${model.session_id}, ${model.scope} scope${model.task_id === null ? "" : ` (task ${model.task_id})`}`
  )
  out.push(`Status: ${model.status}`)
  out.push(`Revision: ${model.revision}`)
  out.push("")
  section("Goals", model.goals.map(entryLine), "No goal recorded.")
  section("Actions", model.actions.map(entryLine), "No actions recorded.")
  section(
    `Changes, ${model.edit_operations} edit operations,`,
    model.changes.map(entryLine),
    "No successful file changes recorded."
  )
  section("Plan evolution", model.plan_evolution.map(entryLine), "No plan recorded.")
  section("Failures", model.failures.map(entryLine), "No failures recorded.")
  section(
    "Decisions",
    model.decisions.map((d) =>
      `- ${flat(d.fact.label)} — ${flat(d.rationale)} (agent-reported)${
        d.alternatives.length > 0 ? `; alternatives: ${d.alternatives.map(flat).join(", ")}` : ""
      } ${evidenceLink(d.fact.evidence)}`
    ),
    "Public rationale unavailable."
  )
  section(
    "Verification",
    model.verification.map((v) =>
      `- ${flat(v.fact.label)}: ${v.status}; exit ${v.exit_code ?? "not recorded"}; ${
        v.fresh ? "fresh" : "not fresh"
      } ${evidenceLink(v.fact.evidence)}`
    ),
    "No verification command recorded."
  )
  section(
    "Review first",
    model.review_priorities.map((r) =>
      `- ${r.priority}: ${r.reason} — ${flat(r.fact.path ?? r.fact.label)} ${evidenceLink(r.fact.evidence)}`
    ),
    "No review signal recorded; this is not a coverage assessment."
  )
  section(
    "Token breakdowns",
    model.token_breakdowns.map((t) =>
      `- ${t.fact.label}: ${Object.entries(t.breakdown).map(([k, v]) => `${k}=${v}`).join(", ")} ${
        evidenceLink(t.fact.evidence)
      }`
    ),
    "No token breakdown recorded."
  )
  const u = model.usage
  out.push(
    `Usage: ${
      u === null
        ? "not recorded"
        : `${u.input_tokens} input (${u.cached_input_tokens} cached, ${u.cache_creation_tokens} cache writes), ${u.output_tokens} output tokens`
    }${model.cost_usd === null ? "" : `; cost $${model.cost_usd}`}`
  )
  const c = model.completeness
  out.push(
    `Evidence: ${c.malformed_records} malformed, ${c.unknown_records} unknown, ${c.legacy_records} legacy, ${c.evicted_turns} evicted turns.`
  )
  for (const w of c.warnings) out.push(`Unavailable: ${w}`)
  return out.join("\n") + "\n"
}

/** Hard-wraps one row to `width` columns (continuation rows indented by two spaces). */
const wrap = (row: string, width: number): Array<string> => {
  const chars = [...row]
  if (chars.length <= width) return [row]
  const out = [chars.slice(0, width).join("")]
  for (let i = width; i < chars.length; i += width - 2) out.push(`  ${chars.slice(i, i + width - 2).join("")}`)
  return out
}

/**
 * A plain diagram: numbered actions (`x` when the status is a failure, else `->`), the
 * non-sequential edges as `from -> to (relation)`, and a closing note; every row hard-wrapped
 * to `max(width, 8)` columns.
 */
export const renderDiagram = (model: ExplanationModel, width = 80): string => {
  const w = Math.max(Math.floor(width), 8)
  const rows: Array<string> = []
  const ops = model.actions
  ops.forEach((a, i) => {
    const marker = failed(a.status) ? "x" : "->"
    rows.push(`${i + 1} ${marker} ${flat(a.label)} [${a.status}]`)
  })
  if (ops.length === 0) rows.push("(no recorded actions)")
  for (const e of model.graph) {
    if (e.relation !== "recorded next") rows.push(`${e.from} -> ${e.to} (${e.relation})`)
  }
  rows.push(
    `Recorded order only: ${model.actions.length} actions, ${model.edit_operations} edits, ${model.failures.length} failures; ` +
      "not a claim about causality."
  )
  return rows.flatMap((r) => wrap(r, w)).join("\n") + "\n"
}
