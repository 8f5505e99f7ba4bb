/**
 * `logbook explain <session>` and `logbook evidence <session> <offset> <digest>`: what the agent
 * did and whether it can be trusted, computed from the retained events only (docs/explain.md),
 * as a terminal summary, details, a text diagram, JSON or a self-contained HTML report; and the
 * exact, redacted line behind any evidence link. Read-only: no lock, no repair, nothing stored.
 */
import { terminalSafe } from "@logbook/domain"
import {
  queryEvidence,
  queryExplanation,
  queryTranscript,
  renderDetails,
  renderDiagram,
  renderHtml,
  renderSummary
} from "@logbook/projections"
import { SessionFs } from "@logbook/store"
import { Effect, Option, Stdio } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { WorkspaceGit } from "../../explain/WorkspaceGit.ts"
import { UsageError } from "../Errors.ts"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { note, printJson, printLines, writeOut } from "../Output.ts"
import { location } from "../Root.ts"

/** How many evidence lines `--html` embeds (the first page of each, at most 4 KiB). */
const EMBEDDED_EVIDENCE = 40

/** `explain <session> [--scope task|session] [--details | --diagram [--width N] | --json | --html FILE [--open]]`. */
export const explainCommand = Command.make(
  "explain",
  {
    session: sessionArgument,
    scope: Flag.Literals("scope", ["task", "session"] as const).pipe(
      Flag.withDescription("task: the latest user task (default); session: every task of the session"),
      Flag.withDefault("task" as const)
    ),
    details: Flag.Boolean("details").pipe(
      Flag.withDescription("Every list in full (actions, changes, plan, failures, decisions, checks, review, tokens)"),
      Flag.withDefault(false)
    ),
    diagram: Flag.Boolean("diagram").pipe(
      Flag.withDescription("A plain text diagram of the recorded actions and their edges"),
      Flag.withDefault(false)
    ),
    width: Flag.Int("width").pipe(
      Flag.filter((n) => n >= 8 && n <= 10_000, (n) => `--width must be between 8 and 10000, got ${n}`),
      Flag.withDescription("Columns of the --diagram output (default 80)"),
      Flag.withDefault(80)
    ),
    format: Flag.Literals("format", ["text", "markdown"] as const).pipe(
      Flag.withDescription(
        "The summary as plain text with short evidence references (the default on a terminal) or as escaped " +
          "Markdown with logbook-evidence: links, for pasting into a PR (the default in a pipe or file)"
      ),
      Flag.optional
    ),
    json: jsonFlag,
    html: Flag.String("html").pipe(
      Flag.withDescription(
        "Write a self-contained HTML report (no script, no network) to this file (relative to the current directory)"
      ),
      Flag.optional
    ),
    open: Flag.Boolean("open").pipe(
      Flag.withDescription("With --html: print the report's file:// URL to open in a browser"),
      Flag.withDefault(false)
    ),
    withWorkspace: Flag.Boolean("with-workspace").pipe(
      Flag.withDescription(
        "With --html: add the workspace's current git status and diff (read-only, 8 KiB, 2 s; not evidence)"
      ),
      Flag.withDefault(false)
    )
  },
  Effect.fn("cli.explain")(
    function*({ details, diagram, format, html, json, open, scope, session, width, withWorkspace }) {
      const chosen = [details, diagram, json, Option.isSome(html)].filter((x) => x).length
      if (Option.isSome(format) && chosen > 0) {
        return yield* new UsageError({
          detail: "--format chooses how the summary is written; --details, --diagram, --json and --html have their own",
          hint: "drop --format, or the other output flag"
        })
      }
      if (chosen > 1) {
        return yield* new UsageError({
          detail: "--details, --diagram, --json and --html are alternatives",
          hint: "choose one output form"
        })
      }
      if (withWorkspace && Option.isNone(html)) {
        return yield* new UsageError({
          detail: "--with-workspace needs --html FILE",
          hint: "e.g. --html report.html --with-workspace"
        })
      }
      if (open && Option.isNone(html)) {
        return yield* new UsageError({ detail: "--open needs --html FILE", hint: "e.g. --html report.html --open" })
      }
      const where = yield* location
      const model = yield* queryExplanation(where.sessionsDir, session, scope)
      if (json) return yield* printJson(model)
      if (details) return yield* writeOut(terminalSafe(renderDetails(model)))
      if (diagram) return yield* writeOut(terminalSafe(renderDiagram(model, width)))
      if (Option.isSome(html)) {
        // Relative to the current directory, like any output path a user types.
        const file = resolve(html.value)
        const fs = yield* SessionFs
        // Embed the lines behind the facts a reviewer reads first (first page of each, bounded).
        const cited = [
          ...model.goals,
          ...model.changes,
          ...model.decisions.map((d) => d.fact),
          ...model.verification.map((v) => v.fact),
          ...model.review_priorities.map((r) => r.fact),
          ...model.failures
        ].map((e) => e.evidence)
        const refs = [...new Map(cited.map((r) => [r.offset, r])).values()].slice(0, EMBEDDED_EVIDENCE)
        const evidence = yield* Effect.forEach(
          refs,
          (r) =>
            queryEvidence(where.sessionsDir, session, { offset: r.offset, digest: r.digest, length: r.length }, 0, 4096)
              .pipe(Effect.option)
        )
        const workspace = withWorkspace
          ? yield* Effect.gen(function*() {
            const git = yield* WorkspaceGit
            return yield* git.snapshot(where.workspace)
          }).pipe(Effect.provide(WorkspaceGit.layerNode))
          : undefined
        const transcript = yield* queryTranscript(where.sessionsDir, session)
        yield* fs.writeAtomic(
          file,
          renderHtml(model, {
            evidence: evidence.flatMap((e) => Option.isSome(e) ? [e.value] : []),
            transcript,
            ...(workspace === undefined ? {} : { workspace })
          })
        )
        yield* note(`wrote the HTML report of ${session} to ${file}`)
        if (open) yield* printLines(pathToFileURL(file).href)
        return
      }
      const stdio = yield* Stdio.Stdio
      const chosenFormat = Option.isSome(format)
        ? format.value
        : (yield* stdio.stdoutIsTerminal)
        ? "text"
        : "markdown"
      return yield* writeOut(terminalSafe(renderSummary(model, chosenFormat)))
    }
  )
).pipe(
  Command.withShortDescription("Explain what the agent did, with evidence (summary, details, diagram, JSON, HTML)"),
  Command.withDescription(
    "Explain a session from its retained events only: goal, changes, decisions, verification (with freshness) " +
      "and what to review first, each fact linked to the log line that records it " +
      "(logbook-evidence:<session>:<offset>:<digest>; show one with `logbook evidence`). Secrets are redacted. Read-only."
  ),
  Command.withExamples([
    { command: "logbook explain demo", description: "A short summary of the latest task" },
    {
      command: "logbook explain demo --format markdown | pbcopy",
      description: "The summary as Markdown with evidence links, to paste into a PR"
    },
    { command: "logbook explain demo --scope session --details", description: "Every list, for all tasks" },
    { command: "logbook explain demo --html report.html --open", description: "A self-contained HTML report" }
  ])
)

/** `evidence <session> <offset> <digest> [--page-offset N] [--limit N] [--json]`. */
export const evidenceCommand = Command.make(
  "evidence",
  {
    session: sessionArgument,
    offset: Argument.Int("offset").pipe(Argument.withDescription("Byte offset of the line (from an evidence link)")),
    digest: Argument.String("digest").pipe(
      Argument.withDescription("SHA-256 of the line, or its first 12+ hex digits (from an evidence link)")
    ),
    pageOffset: Flag.Int("page-offset").pipe(
      Flag.withDescription("Byte offset into the pretty-printed text (from a previous page's next offset)"),
      Flag.withDefault(0)
    ),
    limit: Flag.Int("limit").pipe(
      Flag.filter((n) => n >= 1 && n <= 32_768, (n) => `--limit must be 1 to 32768, got ${n}`),
      Flag.withDescription("Bytes per page, 1 to 32768 (default 32768)"),
      Flag.withDefault(32_768)
    ),
    json: jsonFlag
  },
  Effect.fn("cli.evidence")(function*({ digest, json, limit, offset, pageOffset, session }) {
    const where = yield* location
    const page = yield* queryEvidence(where.sessionsDir, session, { offset, digest }, pageOffset, limit)
    if (json) return yield* printJson(page)
    yield* writeOut(terminalSafe(page.text.endsWith("\n") ? page.text : `${page.text}\n`))
    if (page.next_offset !== null) {
      yield* note(
        `(${page.next_offset} of ${page.total_bytes} bytes shown; next page: --page-offset ${page.next_offset})`
      )
    }
  })
).pipe(
  Command.withShortDescription("Show the recorded line behind an evidence link, redacted"),
  Command.withDescription(
    "Re-read exactly the line an evidence link names (byte offset and SHA-256) and print it as redacted, " +
      "pretty-printed JSON, paged. A line that changed, was evicted or never existed is an error, never empty output."
  ),
  Command.withExamples([
    { command: "logbook evidence demo 1234 3f2a…", description: "The line at byte 1234 whose SHA-256 is 3f2a…" },
    {
      command: "logbook evidence demo 1234 3f2a9c0d1e2f",
      description: "The same line from a short reference (@1234:3f2a9c0d1e2f in the text summary)"
    }
  ])
)
