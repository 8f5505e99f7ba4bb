/**
 * What an import reports: per source its status, the session it wrote, events written, records
 * read and skipped by reason, skipped lines with their numbers; and the totals over sources.
 * Plain data, so the CLI prints it as text or `--json` and a host inspects it.
 */
import type { ImportFormat, UsageTotals } from "@logbook/domain"
import { zeroUsage } from "@logbook/domain"
import { bump } from "./internal/counts.ts"
import { COMPANION } from "./internal/importSources.ts"

/** What happened to one source. */
export type SourceStatus = "created" | "updated" | "unchanged" | "failed" | "refused" | "ignored"

/** One line that was not imported, with where it is and why. */
export interface SkippedLine {
  readonly line: number
  readonly reason: string
}

/** The outcome of one source. */
export interface SourceReport {
  readonly path: string
  readonly format: ImportFormat | undefined
  readonly session: string | undefined
  readonly parent_session: string | undefined
  readonly status: SourceStatus
  readonly reason: string | undefined
  readonly events_written: number
  readonly records_read: number
  /** Records that produced at least one event (`records_read` minus the skipped ones). */
  readonly records_mapped: number
  /** Records read but mapped to nothing, by reason (duplicates, settings, unknown types by type…). */
  readonly records_skipped: Readonly<Record<string, number>>
  /** The version of the writing tool the records name (Codex `cli_version`, Claude Code `version`), if any. */
  readonly format_version: string | undefined
  /** Lines that held no record (not JSON…), at most {@link MAX_LINES_LISTED} of them listed. */
  readonly lines_skipped: ReadonlyArray<SkippedLine>
  readonly lines_skipped_count: number
  /** Lines holding two JSON objects, split and both kept. */
  readonly lines_split: number
  /** Lines with invalid UTF-8, kept with U+FFFD in place of the bad bytes. */
  readonly lines_with_invalid_utf8: number
  /** A last line without its newline that does not parse yet (a live file): left for the next import. */
  readonly pending_tail_bytes: number
  /** Claude Code tool results read back from `<session>/tool-results/` (docs/import.md#separated-tool-results). */
  readonly separated_results_read: number
  /** Of those, files over 1 MiB imported with their middle left out. */
  readonly separated_results_cut: number
  /**
   * Separated tool result files a transcript names that were missing or unreadable (their records
   * are imported as the transcript has them), at most {@link MAX_LINES_LISTED} listed.
   */
  readonly separated_results_missing: ReadonlyArray<string>
  readonly separated_results_missing_count: number
  /** Usage counted for the turn still open at the end of the source (not in the log until the turn ends). */
  readonly open_turn_usage: UsageTotals
  /** What became of the session's memory view after this import (absent when nothing was written). */
  readonly memory?: MemoryOutcome
  /** Problems worth a look that did not stop the import (a source that yields no message, naming the file). */
  readonly warnings: ReadonlyArray<string>
  /** Mapped and counted only: nothing was written (`--dry-run`). */
  readonly dry_run: boolean
}

/**
 * The memory view of a session the import wrote to: derived from the log and written, already
 * equivalent, left alone because the host wrote its own, or not derived (with the reason; the
 * imported events are in the log either way).
 */
export type MemoryOutcome = "written" | "unchanged" | "host view kept" | `not derived: ${string}`

/** The outcome of an import. */
export interface ImportReport {
  readonly sessions_created: number
  readonly sessions_updated: number
  readonly sessions_unchanged: number
  readonly sources_failed: number
  readonly events_written: number
  readonly records_read: number
  readonly records_skipped: Readonly<Record<string, number>>
  readonly lines_skipped: number
  /**
   * Sources that gave nothing: not of a known format, nothing that maps to an event, or no message
   * at all. `logbook import` exits 1 when there is any (unless `--allow-empty`).
   */
  readonly sources_empty: number
  readonly warnings: ReadonlyArray<string>
  readonly sources: ReadonlyArray<SourceReport>
}

/** How many skipped lines one source report lists (the count is always complete). */
export const MAX_LINES_LISTED = 100

/**
 * The report of a source from which nothing was imported (failed, refused, ignored or unchanged),
 * with every count zero.
 */
export const emptyReport = (
  path: string,
  status: SourceStatus,
  reason: string,
  format?: ImportFormat
): SourceReport => ({
  path,
  format,
  session: undefined,
  parent_session: undefined,
  status,
  reason,
  events_written: 0,
  records_read: 0,
  records_mapped: 0,
  records_skipped: {},
  format_version: undefined,
  lines_skipped: [],
  lines_skipped_count: 0,
  lines_split: 0,
  lines_with_invalid_utf8: 0,
  pending_tail_bytes: 0,
  separated_results_read: 0,
  separated_results_cut: 0,
  separated_results_missing: [],
  separated_results_missing_count: 0,
  open_turn_usage: zeroUsage,
  warnings: [],
  dry_run: false
})

/** Whether a source gave nothing: ignored (unknown format, nothing to map) or written without any message. */
export const isEmptySource = (s: SourceReport): boolean =>
  (s.status === "ignored" && s.reason?.startsWith(COMPANION) !== true) ||
  (s.status === "created" && s.warnings.length > 0)

/** Totals over the per-source reports. */
export const summarise = (sources: ReadonlyArray<SourceReport>): ImportReport => {
  const skipped: Record<string, number> = {}
  for (const s of sources) {
    for (const [reason, n] of Object.entries(s.records_skipped)) bump(skipped, reason, n)
  }
  const count = (status: SourceStatus) => sources.filter((s) => s.status === status).length
  return {
    sessions_created: count("created"),
    sessions_updated: count("updated"),
    sessions_unchanged: count("unchanged"),
    sources_failed: count("failed") + count("refused"),
    events_written: sources.reduce((n, s) => n + s.events_written, 0),
    records_read: sources.reduce((n, s) => n + s.records_read, 0),
    records_skipped: skipped,
    lines_skipped: sources.reduce((n, s) => n + s.lines_skipped_count, 0),
    sources_empty: sources.filter(isEmptySource).length,
    warnings: sources.flatMap((s) => s.warnings),
    sources
  }
}
