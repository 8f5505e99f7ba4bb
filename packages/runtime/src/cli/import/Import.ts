/**
 * `logbook import codex|claude|gemini|exec|auto [PATH…]`: turns the sessions other agents wrote into Logbook
 * sessions (docs/import.md). Without paths, `codex` reads `$CODEX_HOME/sessions` and
 * `$CODEX_HOME/archived_sessions` (`CODEX_HOME` defaults to `~/.codex`) and `claude` reads
 * `~/.claude/projects`. Prints a summary (sessions created / updated / unchanged, events written,
 * records read / mapped / skipped by reason, ignored files and why, warnings), or the whole report
 * with `--json`; `--dry-run` maps and reports without writing. Exits 1 at the end when any source
 * failed or was refused, or (unless `--allow-empty`) was not recognised or yields no message,
 * after importing all the others.
 */
import type { ImportFormat } from "@logbook/domain"
import type { ImportReport, SourceReport } from "@logbook/projections"
import {
  deriveImportedMemory,
  emptyReport,
  hasCursorChats,
  importInput,
  importSessions,
  isEmptySource,
  summarise
} from "@logbook/projections"
import { SessionFs } from "@logbook/store"
import { Config, Duration, Effect, Option, Stdio } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { CommandFailed } from "../Errors.ts"
import { jsonFlag } from "../Flags.ts"
import { note, printAll, printJson, shellQuote, table, withProgressLine } from "../Output.ts"
import { Invocation, location } from "../Root.ts"

const pathsArgument = Argument.String("path").pipe(
  Argument.withDescription("Session files or directories (walked recursively; links are never followed)"),
  Argument.variadic()
)

const watchFlag = Flag.Boolean("watch").pipe(
  Flag.withDescription(
    "After importing, keep following the sources and import what they gain (a half-written last line waits " +
      "for its newline); prints one line per session created or updated; stop with Ctrl-C"
  ),
  Flag.withDefault(false)
)

const intervalFlag = Flag.Int("interval").pipe(
  Flag.filter((n) => n >= 1 && n <= 3600, (n) => `--interval must be between 1 and 3600 seconds, got ${n}`),
  Flag.withDescription("Seconds between two looks at the sources with --watch (default 2)"),
  Flag.withDefault(2)
)

const dryRunFlag = Flag.Boolean("dry-run").pipe(
  Flag.withDescription(
    "Read and map every source and print the report (records read, mapped, skipped by reason), writing nothing"
  ),
  Flag.withDefault(false)
)

const allowEmptyFlag = Flag.Boolean("allow-empty").pipe(
  Flag.withDescription(
    "Exit 0 even when a source was not recognised or yields no message (by default such a source makes the " +
      "import exit 1, naming it)"
  ),
  Flag.withDefault(false)
)

const envOr = (name: string) =>
  Config.option(Config.String(name)).pipe(
    Effect.orElseSucceed(() => Option.none<string>()),
    Effect.map(Option.filter((v) => v.length > 0))
  )

const home = Effect.map(envOr("HOME"), Option.getOrElse(() => NodeOs.homedir()))

/** The default sources of a format when no path is given. */
const defaultPaths = (format: ImportFormat | "auto") =>
  Effect.gen(function*() {
    const dir = yield* home
    if (format === "codex") {
      const codexHome = Option.getOrElse(yield* envOr("CODEX_HOME"), () => NodePath.join(dir, ".codex"))
      return [NodePath.join(codexHome, "sessions"), NodePath.join(codexHome, "archived_sessions")]
    }
    if (format === "claude") return [NodePath.join(dir, ".claude", "projects")]
    if (format === "gemini") return [NodePath.join(dir, ".gemini", "tmp")]
    if (format === "copilot") return [NodePath.join(dir, ".copilot", "session-state")]
    if (format === "cursor") {
      // Agent transcripts, and the IDE's chats in its global state.vscdb (Linux, macOS).
      return [
        NodePath.join(dir, ".cursor", "projects"),
        NodePath.join(dir, ".config", "Cursor", "User", "globalStorage", "state.vscdb"),
        NodePath.join(dir, "Library", "Application Support", "Cursor", "User", "globalStorage", "state.vscdb")
      ]
    }
    if (format === "opencode") {
      // OpenCode keeps its data below $XDG_DATA_HOME (~/.local/share) on every platform: the
      // database, and the JSON tree older versions wrote (left to the database once migrated).
      const data = Option.getOrElse(yield* envOr("XDG_DATA_HOME"), () => NodePath.join(dir, ".local", "share"))
      return [NodePath.join(data, "opencode", "opencode.db"), NodePath.join(data, "opencode", "storage")]
    }
    if (format === "cline" || format === "roo") {
      // VS Code's extension storage on Linux and macOS (the Cline CLI keeps its own in ~/.cline/data).
      const ext = format === "cline" ? "saoudrizwan.claude-dev" : "rooveterinaryinc.roo-cline"
      return [
        NodePath.join(dir, ".config", "Code", "User", "globalStorage", ext, "tasks"),
        NodePath.join(dir, "Library", "Application Support", "Code", "User", "globalStorage", ext, "tasks"),
        ...(format === "cline" ? [NodePath.join(dir, ".cline", "data", "tasks")] : [])
      ]
    }
    return []
  })

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

const isDatabase = (path: string): boolean => path.endsWith(".db") || path.endsWith(".vscdb")

/**
 * What an agent's sources were, for its `import all` line: files, and the sessions read from databases
 * (OpenCode's `opencode.db`, Cursor's `state.vscdb`), whose sources are `<database>#<session id>` rather
 * than files.
 */
const whatWasRead = (sources: ReadonlyArray<{ readonly path: string }>): string => {
  const databases = new Set<string>()
  let files = 0
  let sessions = 0
  for (const { path } of sources) {
    const hash = path.lastIndexOf("#")
    const database = hash > 0 && isDatabase(path.slice(0, hash)) ? path.slice(0, hash) : undefined
    if (database !== undefined) {
      databases.add(database)
      sessions++
    } else if (isDatabase(path)) databases.add(path) // a database that could not be read as a whole
    else files++
  }
  const fromDatabases = `${plural(sessions, "session")} from ${plural(databases.size, "database")}`
  if (databases.size === 0) return plural(files, "file")
  return files === 0 ? fromDatabases : `${plural(files, "file")} and ${fromDatabases}`
}

const summaryLines = (report: ImportReport, sessionsDir: string, next: string, dryRun: boolean): Array<string> => {
  const lines = [
    `${dryRun ? "Dry run (nothing written): would import" : "Imported"} ${
      plural(report.sources.length, "source")
    } into ${sessionsDir}: ` +
    `${report.sessions_created} created, ${report.sessions_updated} updated, ${report.sessions_unchanged} unchanged, ` +
    `${report.sources_failed} failed or refused, ${report.sources_empty} empty or not recognised.`,
    `${plural(report.events_written, "event")} ${dryRun ? "would be " : ""}written from ${
      plural(report.records_read, "record")
    } (${report.sources.reduce((n, s) => n + s.records_mapped, 0)} mapped).`
  ]
  const skipped = Object.entries(report.records_skipped).sort((a, b) => b[1] - a[1])
  if (skipped.length > 0) {
    lines.push("Records with nothing to write (duplicates, settings, types the contract has no place for):")
    lines.push(...skipped.map(([reason, n]) => `  ${String(n).padStart(6)}  ${reason}`))
  }
  const bad = report.sources.flatMap((s) => s.lines_skipped.map((l) => `  ${s.path}:${l.line}: ${l.reason}`))
  if (report.lines_skipped > 0) {
    lines.push(`${plural(report.lines_skipped, "line")} skipped:`, ...bad)
    if (bad.length < report.lines_skipped) lines.push(`  … and ${report.lines_skipped - bad.length} more (see --json)`)
  }
  const ignored = report.sources.filter((s) => s.status === "ignored")
  if (ignored.length > 0) {
    lines.push(`${plural(ignored.length, "file")} ignored:`, ...ignored.map((s) => `  ${s.path}: ${s.reason ?? ""}`))
  }
  if (report.warnings.length > 0) lines.push("Warnings:", ...report.warnings.map((w) => `  ${w}`))
  const shown = report.sources.filter((s) => s.status !== "ignored")
  if (shown.length > 0) {
    lines.push(
      ...table(
        ["status", "session", "events", "source"],
        shown.map((s) => [s.status, s.session ?? "-", String(s.events_written), sourceNote(s)]),
        [2]
      )
    )
  }
  const derived = report.sources.filter((s) => s.memory === "written").length
  const notDerived = report.sources.filter((s) => s.memory?.startsWith("not derived") === true)
  if (derived > 0) {
    lines.push(`${plural(derived, "memory view")} derived from the imported logs (facts and search see them).`)
  }
  lines.push(...notDerived.map((s) => `  ${s.session ?? s.path}: memory view ${s.memory ?? ""}`))
  const first = report.sources.find((s) => s.status === "created" || s.status === "updated")
  if (first?.session !== undefined && !dryRun) {
    const session = shellQuote(first.session)
    lines.push(`Next: ${next} show ${session}; ${next} explain ${session}; ${next} search <words> --scope history`)
  }
  return lines
}

const sourceNote = (s: SourceReport): string => {
  const notes = [
    s.lines_split > 0 ? `${plural(s.lines_split, "line")} held two records (both kept)` : "",
    s.pending_tail_bytes > 0 ? `unfinished last line (${s.pending_tail_bytes} B) left for later` : "",
    s.separated_results_read > 0 ? `${plural(s.separated_results_read, "separated tool result")} read back` : "",
    s.separated_results_missing_count > 0
      ? `${plural(s.separated_results_missing_count, "separated tool result")} missing, kept as the transcript shows: ${
        s.separated_results_missing.join(", ")
      }`
      : "",
    s.format_version === undefined ? "" : `${s.format ?? "?"} ${s.format_version}`,
    s.reason ?? ""
  ].filter((n) => n.length > 0)
  return notes.length === 0 ? s.path : `${s.path} (${notes.join("; ")})`
}

const failedStdin = (reason: string): SourceReport => emptyReport("-", "failed", reason, "exec")

interface WatchOptions {
  readonly watch: boolean
  readonly interval: number
  readonly dryRun: boolean
  readonly allowEmpty: boolean
}

/** One line per source a watch pass created, updated, or could not import (each problem said once). */
const watchLines = (report: ImportReport, told: Set<string>, json: boolean): Array<string> =>
  report.sources.flatMap((s) => {
    if (s.status === "created" || s.status === "updated") {
      return [
        json
          ? JSON.stringify(s)
          : `${s.status} ${s.session ?? "-"}: +${plural(s.events_written, "event")} from ${s.path}`
      ]
    }
    if (s.status !== "failed" && s.status !== "refused") return []
    const key = `${s.path}\u0000${s.reason ?? ""}`
    if (told.has(key)) return []
    told.add(key)
    return [json ? JSON.stringify(s) : `${s.status} ${s.path}: ${s.reason ?? ""}`]
  })

/** Keeps importing what the sources gain, every `interval` seconds, until interrupted. */
const watchSources = (
  sessionsDir: string,
  format: ImportFormat | "auto",
  paths: ReadonlyArray<string>,
  interval: number,
  json: boolean
) =>
  Effect.gen(function*() {
    const signatures = new Map<string, string>()
    const told = new Set<string>()
    yield* note(`watching ${paths.join(", ")} every ${interval} s; stop with Ctrl-C`)
    return yield* Effect.forever(Effect.gen(function*() {
      const report = yield* importSessions({ sessionsDir, format, paths, signatures })
      const lines = watchLines(report, told, json)
      if (lines.length > 0) yield* printAll(lines)
      yield* Effect.sleep(Duration.seconds(interval))
    }))
  })

const runImport = (format: ImportFormat | "auto", given: ReadonlyArray<string>, json: boolean, watch: WatchOptions) =>
  Effect.gen(function*() {
    const where = yield* location
    if (format === "auto" && given.length === 0) {
      return yield* new CommandFailed({
        detail: "import auto needs at least one PATH",
        hint: "give the files or directories to import, e.g. `logbook import auto ~/.codex/sessions`"
      })
    }
    const defaults = format === "exec" || format === "auto" || given.length > 0
      ? undefined
      : yield* existingDefaults(format)
    if (defaults !== undefined && defaults.found.length === 0) {
      return yield* new CommandFailed({
        detail: `no ${format} sessions found: ${defaults.all.join(", ")} ${
          defaults.all.length === 1 ? "does" : "do"
        } not exist`,
        hint: "give the files or directories to import as PATH"
      })
    }
    const paths = given.length > 0 ? given : defaults?.found ?? []
    const stdio = yield* Stdio.Stdio
    const fromStdin = format === "exec" && (given.length === 0 || (given.length === 1 && given[0] === "-"))
    if (watch.watch) {
      if (watch.dryRun) {
        return yield* new CommandFailed({
          detail: "--dry-run reads the sources once; it cannot be combined with --watch",
          hint: "drop one of --dry-run and --watch"
        })
      }
      if (fromStdin) {
        return yield* new CommandFailed({
          detail: "--watch follows files or directories, not stdin",
          hint: "give the files `codex exec --json` writes to, or drop --watch"
        })
      }
      return yield* watchSources(where.sessionsDir, format, paths, watch.interval, json)
    }
    const imported = fromStdin
      ? importInput(where.sessionsDir, { name: "-", bytes: stdio.stdin, finished: true }, "exec", {
        dryRun: watch.dryRun
      }).pipe(
        Effect.flatMap((source) => deriveImportedMemory(where.sessionsDir, source)),
        Effect.catch((error) => Effect.succeed(failedStdin(error.message))),
        Effect.map((source) => summarise([source]))
      )
      : withProgressLine((progress) =>
        importSessions({
          sessionsDir: where.sessionsDir,
          format,
          paths,
          dryRun: watch.dryRun,
          onProgress: progress === undefined
            ? undefined
            : (done, total, path) => progress(`importing ${done}/${total}: ${NodePath.basename(path)}`)
        })
      )
    const report = yield* imported
    const invocation = yield* Invocation
    const next = [invocation, ...where.flags.map(shellQuote)].join(" ")
    if (json) yield* printJson(report)
    else yield* printAll(summaryLines(report, where.sessionsDir, next, watch.dryRun))
    return yield* verdict(report, watch.allowEmpty)
  })

/** Exit 1 (after the report was printed) when a source failed, was refused, or — unless allowed — gave nothing. */
const verdict = (report: ImportReport, allowEmpty: boolean) =>
  Effect.gen(function*() {
    const failed = report.sources.filter((s) => s.status === "failed" || s.status === "refused")
    if (failed.length > 0) {
      return yield* new CommandFailed({
        detail: `${plural(failed.length, "source")} could not be imported: ` +
          failed.map((s) => `${s.path} (${s.reason ?? s.status})`).join("; "),
        hint: "the other sources were imported; fix or remove these and run the import again (it is idempotent)"
      })
    }
    const empty = report.sources.filter(isEmptySource)
    if (empty.length > 0 && !allowEmpty) {
      return yield* new CommandFailed({
        detail: `${plural(empty.length, "source")} gave nothing: ` +
          empty.map((s) => `${s.path} (${s.reason ?? s.warnings.join("; ")})`).join("; "),
        hint: "a file of an unknown or changed format imports nothing; check the format (`logbook import auto " +
          "--dry-run PATH` shows what each file gives), or pass --allow-empty to accept it"
      })
    }
  })

/**
 * The agents `import all` looks for, each with its format; their default locations are those of
 * `import <format>` without PATH. A new importer adds its agent here.
 */
export const IMPORT_AGENTS: ReadonlyArray<{ readonly agent: string; readonly format: ImportFormat }> = [
  { agent: "Codex CLI", format: "codex" },
  { agent: "Claude Code", format: "claude" },
  { agent: "Gemini CLI", format: "gemini" },
  { agent: "GitHub Copilot CLI", format: "copilot" },
  { agent: "Cline", format: "cline" },
  { agent: "Roo Code", format: "roo" },
  { agent: "Cursor", format: "cursor" },
  { agent: "OpenCode", format: "opencode" }
]

/**
 * The default locations of a format that exist (a missing one is "nothing found", not a failure): directories,
 * and the database files of OpenCode and Cursor.
 */
const existingDefaults = (format: ImportFormat) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const found: Array<string> = []
    const all = yield* defaultPaths(format)
    const typeOf = (path: string) =>
      Effect.map(
        Effect.option(fs.lstat(path)),
        (info) => Option.isSome(info) && Option.isSome(info.value) ? info.value.value.type : undefined
      )
    for (const path of all) {
      const type = yield* typeOf(path)
      if (type === "Directory" || (type === "File" && isDatabase(path))) {
        found.push(path)
      }
    }
    if (format === "cursor") {
      // Older Cursor versions kept each folder's chats in that folder's workspace database: the
      // ones that hold chats are imported (most workspaces have none, and are not reported).
      const dir = yield* home
      const roots = [
        NodePath.join(dir, ".config", "Cursor", "User", "workspaceStorage"),
        NodePath.join(dir, "Library", "Application Support", "Cursor", "User", "workspaceStorage")
      ]
      for (const root of roots) {
        if ((yield* typeOf(root)) !== "Directory") continue
        const entries = yield* Effect.orElseSucceed(fs.listDirTypes(root), () => [])
        for (const entry of entries) {
          if (entry.type !== "Directory") continue
          const db = NodePath.join(root, entry.name, "state.vscdb")
          if ((yield* typeOf(db)) === "File" && (yield* hasCursorChats(db))) found.push(db)
        }
      }
      all.push(...roots.map((root) => NodePath.join(root, "*", "state.vscdb")))
    }
    return { all, found }
  })

/** `import all`: every agent's default locations, one line per agent, then the combined report. */
const runAll = (json: boolean, watch: WatchOptions) =>
  Effect.gen(function*() {
    const where = yield* location
    const located: Array<{ agent: string; format: ImportFormat; all: ReadonlyArray<string>; found: Array<string> }> = []
    for (const { agent, format } of IMPORT_AGENTS) located.push({ agent, format, ...(yield* existingDefaults(format)) })
    const present = located.filter((l) => l.found.length > 0)
    if (watch.watch) {
      if (watch.dryRun) {
        return yield* new CommandFailed({
          detail: "--dry-run reads the sources once; it cannot be combined with --watch",
          hint: "drop one of --dry-run and --watch"
        })
      }
      if (present.length === 0) {
        return yield* new CommandFailed({
          detail: "no agent's sessions found to watch",
          hint: `looked in ${located.flatMap((l) => l.all).join(", ")}`
        })
      }
      return yield* Effect.all(
        present.map((l) => watchSources(where.sessionsDir, l.format, l.found, watch.interval, json)),
        { concurrency: "unbounded", discard: true }
      )
    }
    const perAgent: Array<{ agent: string; format: ImportFormat; paths: ReadonlyArray<string>; report: ImportReport }> =
      []
    for (const l of present) {
      const report = yield* withProgressLine((progress) =>
        importSessions({
          sessionsDir: where.sessionsDir,
          format: l.format,
          paths: l.found,
          dryRun: watch.dryRun,
          onProgress: progress === undefined
            ? undefined
            : (done, total, path) => progress(`${l.agent}: importing ${done}/${total}: ${NodePath.basename(path)}`)
        })
      )
      perAgent.push({ agent: l.agent, format: l.format, paths: l.found, report })
    }
    const report = summarise(perAgent.flatMap((a) => a.report.sources))
    const agentLines = located.map((l) => {
      const done = perAgent.find((a) => a.format === l.format)
      if (done === undefined) return `${l.agent}: nothing found (looked in ${l.all.join(", ")})`
      const r = done.report
      return `${l.agent}: ${whatWasRead(r.sources)} in ${done.paths.join(", ")}: ${r.sessions_created} ` +
        `created, ${r.sessions_updated} updated, ${r.sessions_unchanged} unchanged, ${r.sources_failed} failed, ` +
        `${r.sources_empty} empty`
    })
    if (json) {
      yield* printJson({
        agents: located.map((l) => ({
          agent: l.agent,
          format: l.format,
          locations: l.all,
          found: l.found,
          sources: perAgent.find((a) => a.format === l.format)?.report.sources.length ?? 0
        })),
        ...report
      })
    } else {
      const invocation = yield* Invocation
      const next = [invocation, ...where.flags.map(shellQuote)].join(" ")
      yield* printAll([...agentLines, ...summaryLines(report, where.sessionsDir, next, watch.dryRun)])
    }
    return yield* verdict(report, watch.allowEmpty)
  })

const allCommand = Command.make(
  "all",
  { json: jsonFlag, watch: watchFlag, interval: intervalFlag, dryRun: dryRunFlag, allowEmpty: allowEmptyFlag },
  ({ allowEmpty, dryRun, interval, json, watch }) => runAll(json, { watch, interval, dryRun, allowEmpty })
).pipe(
  Command.withShortDescription("Import every supported agent's sessions from their default locations"),
  Command.withDescription(
    "Find every supported agent's default session locations ($CODEX_HOME/sessions and archived_sessions, " +
      "CODEX_HOME defaulting to ~/.codex; ~/.claude/projects; ~/.gemini/tmp; ~/.copilot/session-state; " +
      "VS Code's Cline and Roo Code storage; ~/.cursor/projects; ~/.local/share/opencode), print per agent what was found, " +
      "and import it all. A location that does not exist is reported as nothing found. With --watch, keeps " +
      "following all of them."
  ),
  Command.withExamples([{ command: "logbook import all --dry-run", description: "See what a whole machine holds" }])
)

const formatCommand = (format: ImportFormat | "auto", summary: string, description: string, example: string) =>
  Command.make(
    format,
    {
      paths: pathsArgument,
      json: jsonFlag,
      watch: watchFlag,
      interval: intervalFlag,
      dryRun: dryRunFlag,
      allowEmpty: allowEmptyFlag
    },
    ({ allowEmpty, dryRun, interval, json, paths, watch }) =>
      runImport(format, paths, json, { watch, interval, dryRun, allowEmpty })
  )
    .pipe(
      Command.withShortDescription(summary),
      Command.withDescription(description),
      Command.withExamples([{ command: example, description: summary }])
    )

/** `import`: the importers of foreign session formats. */
export const importCommand = Command.make(
  "import",
  { json: jsonFlag, dryRun: dryRunFlag, allowEmpty: allowEmptyFlag },
  // `import` with no format is `import all` (without --watch, which needs the subcommand).
  ({ allowEmpty, dryRun, json }) => runAll(json, { watch: false, interval: 2, dryRun, allowEmpty })
).pipe(
  Command.withShortDescription(
    "Import the sessions of Codex, Claude Code, Gemini, Copilot CLI, Cline, Roo Code, Cursor, Aider and OpenCode"
  ),
  Command.withDescription(
    "Import the sessions other agents already wrote, one Logbook session per source thread " +
      "(<agent>-<source id>: codex-<thread id>, claude-<session id>, …). Re-importing is idempotent: unchanged sources write " +
      "nothing, grown ones only their new records, changed ones are refused. Without a subcommand, imports " +
      "every supported agent's default locations, as `import all`. See docs/import.md."
  ),
  Command.withSubcommands([
    allCommand,
    formatCommand(
      "codex",
      "Import Codex CLI rollouts (default: $CODEX_HOME/sessions and archived_sessions)",
      "Import Codex CLI rollout files (rollout-*.jsonl). Without PATH, reads $CODEX_HOME/sessions and " +
        "$CODEX_HOME/archived_sessions, CODEX_HOME defaulting to ~/.codex.",
      "logbook import codex"
    ),
    formatCommand(
      "claude",
      "Import Claude Code transcripts (default: ~/.claude/projects)",
      "Import Claude Code transcripts (<session>.jsonl, subagents/agent-*.jsonl as their own sessions naming " +
        "their parent). Without PATH, reads ~/.claude/projects.",
      "logbook import claude ~/.claude/projects/-Users-me-repo"
    ),
    formatCommand(
      "exec",
      "Import `codex exec --json` output from files or stdin (`-` or no FILE)",
      "Import the JSON lines `codex exec --json` prints (e.g. saved CI logs); `#` comment lines are ignored. " +
        "With no FILE or with `-`, reads stdin.",
      "codex exec --json 'fix the tests' | logbook import exec -"
    ),
    formatCommand(
      "gemini",
      "Import Gemini CLI sessions (default: ~/.gemini/tmp)",
      "Import Gemini CLI sessions: session-*.json files (one JSON object with messages) and the newer JSONL " +
        "form. Without PATH, reads ~/.gemini/tmp.",
      "logbook import gemini ~/.gemini/tmp"
    ),
    formatCommand(
      "copilot",
      "Import GitHub Copilot CLI sessions (default: ~/.copilot/session-state)",
      "Import GitHub Copilot CLI sessions (<id>/events.jsonl). Without PATH, reads ~/.copilot/session-state.",
      "logbook import copilot ~/.copilot/session-state"
    ),
    formatCommand(
      "opencode",
      "Import OpenCode sessions (default: ~/.local/share/opencode/opencode.db and storage/)",
      "Import OpenCode sessions: its SQLite database (opencode.db, read-only; one session per OpenCode " +
        "session), the storage/ JSON tree older versions wrote, and the JSON `opencode export <session>` " +
        "writes ({info, messages: [{info, parts}]}). Without PATH, reads $XDG_DATA_HOME/opencode (default " +
        "~/.local/share/opencode). Reading the database needs Node 22.13 or later (node:sqlite).",
      "logbook import opencode ~/.local/share/opencode/opencode.db"
    ),
    formatCommand(
      "aider",
      "Import Aider chat histories (.aider.chat.history.md; PATH required)",
      "Import Aider chat histories: each repository's .aider.chat.history.md (a PATH that is a directory is " +
        "searched for them). Aider keeps no history in a home location, so `import all` does not look for it.",
      "logbook import aider ~/src/my-repo"
    ),
    formatCommand(
      "cursor",
      "Import Cursor agent transcripts and IDE chats (default: ~/.cursor/projects, the state.vscdb databases)",
      "Import Cursor agent transcripts (<project>/agent-transcripts/<id>.jsonl or <id>/<id>.jsonl; they carry " +
        "no times, tokens or (mostly) tool calls) and the IDE's chats from its state.vscdb (read-only; one " +
        "session per chat, cursor-ide-<composer id>). Without PATH, reads ~/.cursor/projects, the global " +
        "state.vscdb below ~/.config/Cursor (Linux) or ~/Library/Application Support/Cursor (macOS), and " +
        "the workspace databases there (User/workspaceStorage/*/state.vscdb) that hold chats.",
      "logbook import cursor ~/.cursor/projects"
    ),
    formatCommand(
      "cline",
      "Import Cline tasks (default: VS Code's saoudrizwan.claude-dev storage, ~/.cline/data)",
      "Import Cline tasks (tasks/<id>/ui_messages.json). Without PATH, reads the tasks of VS Code's " +
        "globalStorage/saoudrizwan.claude-dev (Linux and macOS locations) and ~/.cline/data/tasks.",
      "logbook import cline ~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks"
    ),
    formatCommand(
      "roo",
      "Import Roo Code tasks (default: VS Code's rooveterinaryinc.roo-cline storage)",
      "Import Roo Code tasks (tasks/<id>/ui_messages.json). Without PATH, reads the tasks of VS Code's " +
        "globalStorage/rooveterinaryinc.roo-cline (Linux and macOS locations).",
      "logbook import roo ~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/tasks"
    ),
    formatCommand(
      "auto",
      "Import files of any supported format, recognised from their content",
      "Import session files whose format is recognised from their first records (Codex rollouts, Claude " +
        "Code transcripts, Gemini CLI sessions, Copilot CLI events, Cline / Roo Code ui_messages.json, Cursor transcripts, Aider histories, OpenCode databases, storage/ trees and export JSON, codex exec --json output); files of no known format are ignored.",
      "logbook import auto ./backups"
    )
  ])
)
