/**
 * `logbook demo`: records a realistic simulated agent session through `SessionMemory` (the path
 * a host uses) — a user goal, reasoning, commands with their output, file changes with diffs,
 * a failed turn, token usage, the thread's completion — and prints the commands to look at it.
 */
import { formatRfc3339, GoalCommand, newProgressLedger, setMilestones } from "@logbook/domain"
import { findSession } from "@logbook/projections"
import { Clock, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { SessionMemory } from "../../SessionMemory.ts"
import { CommandFailed } from "../Errors.ts"
import { jsonFlag } from "../Flags.ts"
import { printJson, printLines, shellQuote } from "../Output.ts"
import { Invocation, location } from "../Root.ts"
import { demoEvents } from "./DemoScenario.ts"

/** The objective of the simulated session's goal. */
const DEMO_OBJECTIVE = "Make the flaky retry test deterministic"

const compactStamp = (ms: number): string => formatRfc3339(ms, "Z").replace(/[-:]/gu, "").slice(0, 15)

/** `demo [--turns N] [--session ID] [--json]`. */
export const demoCommand = Command.make(
  "demo",
  {
    turns: Flag.Int("turns").pipe(
      Flag.filter((n) => n >= 1 && n <= 10_000, (n) => `--turns must be between 1 and 10000, got ${n}`),
      Flag.withDescription("Number of turns to simulate (turn 2 fails; default 3)"),
      Flag.withDefault(3)
    ),
    session: Flag.String("session").pipe(
      Flag.filter((id) => id.length > 0, () => "--session is empty"),
      Flag.withDescription("Session id to record into (default demo-<UTC timestamp>); must not exist yet"),
      Flag.optional
    ),
    json: jsonFlag
  },
  Effect.fn("cli.demo")(function*({ json, session, turns }) {
    const where = yield* location
    const now = yield* Clock.currentTimeMillis
    const sessionId = Option.getOrElse(session, () => `demo-${compactStamp(now)}`)
    const existing = yield* Effect.result(findSession(where.sessionsDir, sessionId))
    if (existing._tag === "Success") {
      return yield* new CommandFailed({
        detail: `session ${sessionId} already exists in ${where.sessionsDir}`,
        hint: "choose another id with --session, or inspect it with `logbook show`"
      })
    }
    // Start in the past so the recorded timestamps end around now.
    const events = demoEvents(sessionId, turns, now - turns * 90_000)
    const manifest = yield* Effect.gen(function*() {
      const memory = yield* SessionMemory
      for (const event of events) yield* memory.append(event)
      yield* memory.flush
      // The host also tracked the goal and its milestones (see `goal show` / `progress show`).
      yield* memory.goals.createGoal({ goalId: "goal-retry-flake", objective: DEMO_OBJECTIVE, tokenBudget: 200_000 })
      yield* memory.goals.run(GoalCommand.AccountElapsed())
      yield* memory.goals.run(GoalCommand.Complete())
      yield* memory.goals.updateProgress((_, nowIso) =>
        setMilestones(newProgressLedger(sessionId, DEMO_OBJECTIVE, nowIso), [
          { id: "m1", description: "Reproduce the flaky retry test", status: "done" },
          { id: "m2", description: "Make the backoff jitter injectable", status: "done" },
          { id: "m3", description: "Record the API change in CHANGELOG.md", status: turns >= 3 ? "done" : "pending" }
        ], nowIso)
      )
      return yield* memory.manifest
    }).pipe(Effect.provide(SessionMemory.layer({
      workspace: where.workspace,
      sessionsDir: where.sessionsDir,
      sessionId,
      retention: false,
      requireExclusive: true
    })))
    const cli = yield* Invocation
    const flags = where.flags.map(shellQuote).join(" ")
    const run = (args: string) => `${cli}${flags.length > 0 ? ` ${flags}` : ""} ${args}`
    const id = shellQuote(sessionId)
    const next = [
      { command: run(`show ${id}`), what: "manifest, retained turns, lock state, size on disk" },
      { command: run(`turn ${id} 1`), what: "the events of turn 1 as JSONL" },
      ...(turns >= 2 ? [{ command: run(`turn ${id} 2`), what: "the turn that failed (rate limit)" }] : []),
      { command: run(`events ${id}`), what: "every retained event (add --follow to watch live)" },
      { command: run(`verify ${id}`), what: "integrity check: exit 0 when clean, 5 on problems" },
      { command: run(`goal show ${id}`), what: "the goal the host tracked, its status and history" },
      { command: run(`progress show ${id}`), what: "the progress ledger as Markdown" },
      { command: run(`explain ${id}`), what: "what the agent did, with evidence (--html FILE for a report)" },
      { command: run("sessions"), what: "all sessions, most recent first" }
    ]
    if (json) {
      return yield* printJson({
        session_id: sessionId,
        sessions_dir: where.sessionsDir,
        turn_count: manifest.turn_count,
        event_count: manifest.event_count,
        status: manifest.status,
        next: next.map((n) => n.command)
      })
    }
    const width = Math.max(...next.map((n) => n.command.length))
    yield* printLines(
      `Recorded a simulated agent session: ${sessionId}`,
      `  ${manifest.turn_count} turns${turns >= 2 ? " (turn 2 failed)" : ""}, ${manifest.event_count} events, ` +
        `status ${manifest.status}`,
      `  in ${where.sessionsDir}`,
      "",
      "Look at it next:",
      ...next.map((n) => `  ${n.command.padEnd(width)}   # ${n.what}`)
    )
  })
).pipe(
  Command.withShortDescription("Record a realistic simulated agent session and print what to look at next"),
  Command.withDescription(
    "Record a realistic simulated agent session (user goal, reasoning, commands with output, file changes with " +
      "diffs, a failed turn, token usage) into the sessions dir, then print the commands to inspect it."
  ),
  Command.withExamples([
    { command: "logbook demo", description: "Record a 3-turn session named demo-<timestamp>" },
    { command: "logbook demo --turns 5 --session sample", description: "Record 5 turns into session `sample`" }
  ])
)
