/**
 * `logbook verify <session>`: a strictly read-only integrity check. Rescans the log and compares
 * it with the stored metadata; prints every finding with byte offsets and exits 5 when anything
 * is found.
 */
import type { LineProblem, Stored, VerifyReport } from "@logbook/projections"
import { verifySession } from "@logbook/projections"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { IntegrityProblems } from "../Errors.ts"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { formatBytes, printJson, printLines, table, withProgress } from "../Output.ts"
import { location } from "../Root.ts"

const storedState = <A>(s: Stored<A>) => s._tag === "Present" ? "present" : s._tag === "Missing" ? "missing" : "invalid"

const linesJson = (lines: ReadonlyArray<LineProblem>) =>
  lines.map((l) => ({ offset: l.offset, length: l.length, reason: l.reason }))

const reportJson = (r: VerifyReport) => ({
  session_id: r.inspection.name,
  events_path: r.inspection.paths.events,
  clean: r.findings.length === 0,
  live: r.inspection.live,
  file_len: r.scan.fileLen,
  lines: r.scan.lines,
  event_count: r.scan.state.eventCount,
  turn_count: r.scan.state.turnCount,
  status: r.scan.state.status,
  in_turn: r.scan.state.inTurn,
  retained_turn_base: r.scan.turnBase,
  torn_tail: r.scan.tornTail === undefined ? null : linesJson([r.scan.tornTail])[0],
  malformed_lines: { count: r.scan.malformedCount, lines: linesJson(r.scan.malformed) },
  undecodable_lines: { count: r.scan.undecodableCount, lines: linesJson(r.scan.undecodable) },
  metadata: {
    manifest: storedState(r.inspection.manifest),
    turn_index: storedState(r.inspection.index),
    pending_cap_rewrite: r.inspection.marker._tag !== "Missing"
  },
  findings: r.findings.map((f) => ({ kind: f.kind, message: f.message }))
})

const problemRows = (title: string, count: number, lines: ReadonlyArray<LineProblem>) =>
  count === 0 ? [] : [
    `${title} (${count}${count > lines.length ? `, first ${lines.length} listed` : ""}):`,
    ...table(["OFFSET", "LENGTH", "REASON"], lines.map((l) => [String(l.offset), String(l.length), l.reason]), [0, 1])
      .map((row) => `  ${row}`)
  ]

/** `verify <session> [--json]`. */
export const verifyCommand = Command.make(
  "verify",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.verify")(function*({ json, session }) {
    const where = yield* location
    const report = yield* withProgress(
      `verifying ${session}`,
      (onProgress) => verifySession(where.sessionsDir, session, { onProgress })
    )
    const s = report.scan
    if (json) {
      yield* printJson(reportJson(report))
    } else {
      yield* printLines(
        `Verified ${report.inspection.name}: ${s.lines} lines, ${formatBytes(s.fileLen)}; ` +
          `${s.state.eventCount} events in ${s.state.turnCount} closed turns${
            s.state.inTurn ? " + 1 open" : ""
          }, status ${s.state.status}`,
        ...(report.inspection.live
          ? ["Note: a live process has this session open; differences may be writes in flight."]
          : []),
        ...(report.findings.length === 0
          ? ["Clean: no torn tail, no malformed lines; manifest.json and index/turns.json match the log."]
          : [
            `Found ${report.findings.length} problem(s):`,
            ...report.findings.map((f) => `  - ${f.kind}: ${f.message}`),
            ...problemRows("Malformed lines (skipped by the scan)", s.malformedCount, s.malformed),
            ...problemRows("Undecodable lines (dropped by turn reconstruction)", s.undecodableCount, s.undecodable)
          ])
      )
    }
    if (report.findings.length > 0) {
      return yield* new IntegrityProblems({ session: report.inspection.name, count: report.findings.length })
    }
  })
).pipe(
  Command.withShortDescription("Check a session read-only; exit 5 when problems are found"),
  Command.withDescription(
    "Check a session's integrity without writing anything: rescan events.jsonl and compare it with the stored " +
      "manifest.json and index/turns.json (torn tail, malformed lines with byte offsets, counters, index). " +
      "Exit 5 if anything is found, 0 if clean."
  ),
  Command.withExamples([
    { command: "logbook verify demo", description: "Check the session `demo`" },
    { command: "logbook verify demo --json", description: "The report as JSON (still exit 5 on problems)" }
  ])
)
