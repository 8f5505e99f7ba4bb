/**
 * `logbook retention run|sweep|pin|unpin`: the store's retention operations (docs/log.md#retention), printing
 * what was — or with `--dry-run`, would be — changed. The dry run applies the same pure planner
 * the Retention service uses to the same candidates (direct children that are not preserved,
 * pinned, live or unreadable), with the abandoned-session sweep simulated first.
 */
import type { RetentionCandidate, RetentionChoice, RetentionPolicy } from "@logbook/domain"
import { ageCutoffSeconds, isOlderThanCutoff, planRetention, sessionDirName } from "@logbook/domain"
import type { SessionSummary } from "@logbook/projections"
import { findSession, recentSessions } from "@logbook/projections"
import { Retention } from "@logbook/store"
import { Clock, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { printJson, printLines, table } from "../Output.ts"
import { location } from "../Root.ts"

const maxAgeDaysFlag = Flag.Int("max-age-days").pipe(
  Flag.filter((n) => n >= 0, (n) => `--max-age-days must be 0 or more, got ${n}`)
)

const preserveFlag = Flag.String("preserve").pipe(
  Flag.withDescription("Never touch this session (e.g. the one a host is about to reopen)"),
  Flag.optional
)

const includeImportedFlag = Flag.Boolean("include-imported").pipe(
  Flag.withDescription(
    "Also sweep and remove sessions imported from other agents (logbook import); without it imported " +
      "history is an archive retention never touches"
  ),
  Flag.withDefault(false)
)

const PHASE_TEXT: Record<RetentionChoice["phase"], string> = {
  "zero-turn": "completed without a closed turn",
  "over-limit": "oldest beyond --max-sessions",
  expired: "not updated within --max-age-days"
}

/**
 * What `Retention.apply` would do, computed without changing anything: the sessions the
 * abandoned sweep would mark completed, and the removals the planner would choose afterwards.
 *
 * **Gotchas**: a session whose state changes between the dry run and a real run (opened, pinned,
 * updated) is judged again by the real run.
 */
export const planDryRun = (
  sessions: ReadonlyArray<SessionSummary>,
  policy: RetentionPolicy,
  preserve: string | undefined,
  nowMs: number,
  includeImported = false
) => {
  const preserved = preserve === undefined ? undefined : sessionDirName(preserve)
  const cutoff = ageCutoffSeconds(policy.maxAgeDays, nowMs)
  const marked: Array<string> = []
  const candidates: Array<RetentionCandidate> = []
  for (const s of [...sessions].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (s.id === preserved || s.pinned || s.live || (s.imported && !includeImported)) continue
    const abandoned = s.status === "active" && isOlderThanCutoff(s.updatedAt, cutoff)
    if (abandoned) marked.push(s.id)
    candidates.push({
      name: s.id,
      status: abandoned ? "completed" : s.status,
      turnCount: s.turnCount,
      updatedAt: s.updatedAt
    })
  }
  return { marked, removed: planRetention(candidates, policy, nowMs) }
}

const printOutcome = (
  json: boolean,
  dryRun: boolean,
  sessionsDir: string,
  policy: RetentionPolicy,
  preserve: Option.Option<string>,
  marked: ReadonlyArray<string>,
  removed: ReadonlyArray<RetentionChoice>
) => {
  if (json) {
    return printJson({
      dry_run: dryRun,
      sessions_dir: sessionsDir,
      policy: { max_sessions: policy.maxSessions, max_age_days: policy.maxAgeDays },
      preserve: Option.getOrNull(preserve),
      marked,
      removed: removed.map((r) => ({ session_id: r.name, phase: r.phase }))
    })
  }
  return printLines(
    `${
      dryRun ? "Dry run (nothing changed)" : "Retention applied"
    } in ${sessionsDir}: keep at most ${policy.maxSessions} ` +
      `inactive sessions${policy.maxAgeDays > 0 ? `, none older than ${policy.maxAgeDays} days` : ", no age limit"}` +
      (Option.isSome(preserve) ? `, preserving ${preserve.value}` : ""),
    marked.length === 0
      ? `${dryRun ? "Would mark" : "Marked"} no abandoned active sessions.`
      : `${dryRun ? "Would mark" : "Marked"} ${marked.length} abandoned active session(s) completed: ${
        marked.join(", ")
      }`,
    ...(removed.length === 0
      ? [`${dryRun ? "Would remove" : "Removed"} nothing.`]
      : [
        `${dryRun ? "Would remove" : "Removed"} ${removed.length} session(s):`,
        ...table(["SESSION", "PHASE", "WHY"], removed.map((r) => [r.name, r.phase, PHASE_TEXT[r.phase]])).map((l) =>
          `  ${l}`
        )
      ])
  )
}

/** `retention run`. */
const runCommand = Command.make(
  "run",
  {
    maxSessions: Flag.Int("max-sessions").pipe(
      Flag.filter((n) => n >= 0, (n) => `--max-sessions must be 0 or more, got ${n}`),
      Flag.withDescription("Keep at most N inactive (completed, unpinned, not live) sessions"),
      Flag.withDefault(50)
    ),
    maxAgeDays: maxAgeDaysFlag.pipe(
      Flag.withDescription(
        "Remove inactive sessions not updated for D days and complete abandoned ones (0: no age limit)"
      ),
      Flag.withDefault(30)
    ),
    preserve: preserveFlag,
    includeImported: includeImportedFlag,
    dryRun: Flag.Boolean("dry-run").pipe(
      Flag.withDescription("Print what would be marked and removed; change nothing"),
      Flag.withDefault(false)
    ),
    json: jsonFlag
  },
  Effect.fn("cli.retention.run")(function*({ dryRun, includeImported, json, maxAgeDays, maxSessions, preserve }) {
    const where = yield* location
    const policy: RetentionPolicy = { maxSessions, maxAgeDays }
    if (dryRun) {
      const listing = yield* recentSessions(where.sessionsDir)
      const now = yield* Clock.currentTimeMillis
      const plan = planDryRun(listing.sessions, policy, Option.getOrUndefined(preserve), now, includeImported)
      return yield* printOutcome(json, true, where.sessionsDir, policy, preserve, plan.marked, plan.removed)
    }
    const retention = yield* Retention
    const report = yield* retention.apply(
      where.sessionsDir,
      policy,
      { ...(Option.isSome(preserve) ? { preserve: preserve.value } : {}), includeImported }
    )
    yield* printOutcome(
      json,
      false,
      where.sessionsDir,
      policy,
      preserve,
      report.marked,
      report.removed.map((r) => ({ name: r.id, phase: r.phase }))
    )
  })
).pipe(
  Command.withShortDescription("Apply the retention policy (or --dry-run)"),
  Command.withDescription(
    "Apply the retention policy: complete abandoned active sessions older than --max-age-days, then remove " +
      "completed sessions without turns, the oldest beyond --max-sessions, and those older than --max-age-days. " +
      "Pinned, live and preserved sessions are never touched, nor imported ones unless --include-imported."
  ),
  Command.withExamples([
    { command: "logbook retention run --dry-run", description: "Show what the default policy (50, 30 days) would do" },
    { command: "logbook retention run --max-sessions 10 --preserve current", description: "Keep 10, spare `current`" }
  ])
)

/** `retention sweep`. */
const sweepCommand = Command.make(
  "sweep",
  {
    maxAgeDays: maxAgeDaysFlag.pipe(
      Flag.filter((n) => n >= 1, () => "--max-age-days must be at least 1 for a sweep (0 disables it)"),
      Flag.withDescription("Mark active sessions not updated for D days as completed")
    ),
    preserve: preserveFlag,
    includeImported: includeImportedFlag,
    json: jsonFlag
  },
  Effect.fn("cli.retention.sweep")(function*({ includeImported, json, maxAgeDays, preserve }) {
    const where = yield* location
    const retention = yield* Retention
    const marked = yield* retention.markAbandoned(
      where.sessionsDir,
      maxAgeDays,
      { ...(Option.isSome(preserve) ? { preserve: preserve.value } : {}), includeImported }
    )
    if (json) return yield* printJson({ sessions_dir: where.sessionsDir, max_age_days: maxAgeDays, marked })
    yield* printLines(
      marked.length === 0
        ? `No active session older than ${maxAgeDays} days (outside pinned, live and preserved ones); nothing changed.`
        : `Marked ${marked.length} abandoned session(s) completed: ${marked.join(", ")}`
    )
  })
).pipe(
  Command.withShortDescription("Mark abandoned active sessions completed"),
  Command.withDescription(
    "Mark abandoned sessions completed: active sessions (a crashed agent never wrote thread.completed) whose " +
      "last update is older than --max-age-days. Removes nothing; `retention run` may remove them afterwards."
  ),
  Command.withExamples([
    { command: "logbook retention sweep --max-age-days 7", description: "Complete sessions idle for a week" }
  ])
)

/** `retention pin`. */
const pinCommand = Command.make(
  "pin",
  {
    session: sessionArgument,
    reason: Flag.String("reason").pipe(
      Flag.withDescription("Why the session is kept (stored in retention-pin.json)"),
      Flag.withDefault("pinned with logbook retention pin")
    ),
    json: jsonFlag
  },
  Effect.fn("cli.retention.pin")(function*({ json, reason, session }) {
    const where = yield* location
    yield* findSession(where.sessionsDir, session)
    const retention = yield* Retention
    yield* retention.pin(where.sessionsDir, session, reason)
    if (json) return yield* printJson({ session_id: session, pinned: true, reason })
    yield* printLines(
      `Pinned ${session}: retention will never remove it (reason: ${reason}). ` +
        `Undo with \`logbook retention unpin ${session}\`.`
    )
  })
).pipe(
  Command.withShortDescription("Pin a session so retention never removes it"),
  Command.withDescription("Pin a session so retention never removes it (writes retention-pin.json)."),
  Command.withExamples([
    { command: "logbook retention pin demo --reason \"post-mortem\"", description: "Keep `demo` for a post-mortem" }
  ])
)

/** `retention unpin`. */
const unpinCommand = Command.make(
  "unpin",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.retention.unpin")(function*({ json, session }) {
    const where = yield* location
    yield* findSession(where.sessionsDir, session)
    const retention = yield* Retention
    const removed = yield* retention.unpin(where.sessionsDir, session)
    if (json) return yield* printJson({ session_id: session, unpinned: removed })
    yield* printLines(
      removed ? `Unpinned ${session}: retention may remove it again.` : `${session} was not pinned; nothing changed.`
    )
  })
).pipe(
  Command.withShortDescription("Remove a session's pin"),
  Command.withDescription("Remove a session's pin so retention may remove it again."),
  Command.withExamples([{ command: "logbook retention unpin demo", description: "Let retention handle `demo` again" }])
)

/** `retention` with its subcommands. */
export const retentionCommand = Command.make("retention").pipe(
  Command.withShortDescription("Apply retention, sweep abandoned sessions, pin and unpin"),
  Command.withDescription(
    "Retention of session stores: apply the policy (run), complete abandoned sessions (sweep), pin and unpin."
  ),
  Command.withSubcommands([runCommand, sweepCommand, pinCommand, unpinCommand])
)
