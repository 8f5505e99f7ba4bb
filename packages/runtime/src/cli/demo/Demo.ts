/**
 * `logbook demo`: records a realistic simulated agent session through `SessionMemory` (the path
 * a host uses) — a user goal, reasoning, commands with their output, file changes with diffs,
 * a failed turn, token usage, the thread's completion — and prints the commands to look at it.
 */
import type { ItemContext, ThreadEvent, ThreadItem, Usage } from "@logbook/domain"
import { formatRfc3339, GoalCommand, newProgressLedger, setMilestones } from "@logbook/domain"
import { findSession } from "@logbook/projections"
import { Clock, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { SessionMemory } from "../../SessionMemory.ts"
import { CommandFailed } from "../Errors.ts"
import { jsonFlag } from "../Flags.ts"
import { printJson, printLines, shellQuote } from "../Output.ts"
import { Invocation, location } from "../Root.ts"

const TASK = "task-retry-flake"
const ACTOR = "agent-root"

/** One item event of a simulated turn, `after` simulated seconds into the turn. */
interface Step {
  readonly after: number
  readonly phase: "started" | "completed"
  readonly activity?: "inspection" | "verification" | "mutation"
  readonly item: (context: ItemContext) => ThreadItem
}

interface Scenario {
  readonly goal: string
  readonly origin: "user" | "continuation" | "retry" | "correction"
  readonly steps: ReadonlyArray<Step>
  readonly usage: Usage
  /** Present for the turn that fails. */
  readonly failure?: string
}

const usage = (input: number, cached: number, output: number): Usage => ({
  input_tokens: input,
  cached_input_tokens: cached,
  cache_creation_tokens: input - cached > 2000 ? 1024 : 0,
  output_tokens: output
})

const RETRY_DIFF = [
  "--- a/src/http/retry.ts",
  "+++ b/src/http/retry.ts",
  "@@ -12,7 +12,8 @@ export function backoff(attempt: number, rng: () => number = Math.random): number {",
  "   const base = 100 * 2 ** attempt",
  "-  const jitter = Math.random() * base",
  "+  // Injected so tests can pin the jitter; production keeps Math.random.",
  "+  const jitter = rng() * base",
  "   return Math.min(base + jitter, 30_000)",
  " }",
  ""
].join("\n")

const TEST_DIFF = [
  "--- a/test/retry.test.ts",
  "+++ b/test/retry.test.ts",
  "@@ -4,5 +4,5 @@ describe(\"backoff\", () => {",
  "   it(\"doubles the delay on each attempt\", () => {",
  "-    expect(backoff(2)).toBeLessThan(800)",
  "+    expect(backoff(2, () => 0.5)).toBe(600)",
  "   })",
  " })",
  ""
].join("\n")

const CHANGELOG_DIFF = [
  "--- a/CHANGELOG.md",
  "+++ b/CHANGELOG.md",
  "@@ -1,3 +1,6 @@",
  " # Changelog",
  " ",
  "+## Unreleased",
  "+- `backoff` takes an optional random source; the retry test is deterministic now.",
  "+",
  ""
].join("\n")

const cmd = (
  id: string,
  command: string,
  after: number,
  duration: number,
  output: string,
  exitCode: number,
  activity: NonNullable<Step["activity"]>
): ReadonlyArray<Step> => [
  {
    after,
    phase: "started",
    activity,
    item: (context) => ({
      context,
      id,
      type: "command_execution",
      command,
      aggregated_output: "",
      status: "in_progress"
    })
  },
  {
    after: after + duration,
    phase: "completed",
    activity,
    item: (context) => ({
      context,
      id,
      type: "command_execution",
      command,
      aggregated_output: output,
      exit_code: exitCode,
      status: exitCode === 0 ? "completed" : "failed"
    })
  }
]

/** An item reported once, completed; `fields` are the item without its context. */
const done = <const I extends DistributiveOmit<ThreadItem, "context">>(
  after: number,
  fields: I,
  activity?: Step["activity"]
): Step => {
  const item = (context: ItemContext): ThreadItem => ({ context, ...fields })
  return activity === undefined ? { after, phase: "completed", item } : { after, phase: "completed", item, activity }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** The first three turns tell the story; later turns are routine follow-ups. */
const scenario = (turn: number): Scenario => {
  const t = `t${turn}`
  switch (turn) {
    case 1:
      return {
        goal: "The retry test in test/retry.test.ts fails about one run in five; make it deterministic.",
        origin: "user",
        steps: [
          done(1, {
            id: `${t}-reason-1`,
            type: "reasoning",
            stage: "analysis",
            text: "An intermittent failure in a backoff test usually means real randomness; reproduce it first."
          }),
          ...cmd(
            `${t}-cmd-1`,
            "npx vitest run test/retry.test.ts",
            2,
            6,
            "FAIL test/retry.test.ts > backoff > doubles the delay on each attempt\n" +
              "AssertionError: expected 812.4 to be less than 800\n Test Files  1 failed (1)\n      Tests  1 failed (3)",
            1,
            "verification"
          ),
          ...cmd(
            `${t}-cmd-2`,
            "rg -n \"Math.random\" src/http",
            9,
            1,
            "src/http/retry.ts:14:  const jitter = Math.random() * base",
            0,
            "inspection"
          ),
          done(11, {
            id: `${t}-reason-2`,
            type: "reasoning",
            stage: "diagnosis",
            text: "backoff() draws its jitter from Math.random, so the assertion depends on luck. " +
              "Inject the random source and pin it in the test."
          }),
          done(12, {
            id: `${t}-decision-1`,
            type: "decision",
            summary: "Inject the random source instead of removing the jitter",
            rationale:
              "Jitter keeps clients from retrying in lockstep; the test needs determinism, not another backoff.",
            alternatives: ["Remove the jitter", "Retry the flaky test in CI"],
            evidence_ids: [`${t}-cmd-1`, `${t}-cmd-2`]
          }),
          done(15, {
            id: `${t}-fc-1`,
            type: "file_change",
            changes: [{ path: "src/http/retry.ts", kind: "update" }, { path: "test/retry.test.ts", kind: "update" }],
            status: "completed",
            unified_diff: `${RETRY_DIFF}${TEST_DIFF}`,
            additions: 3,
            deletions: 2
          }, "mutation"),
          ...cmd(
            `${t}-cmd-3`,
            "npx vitest run test/retry.test.ts",
            16,
            5,
            " Test Files  1 passed (1)\n      Tests  3 passed (3)",
            0,
            "verification"
          ),
          done(22, {
            id: `${t}-msg`,
            type: "agent_message",
            text: "backoff() now takes an optional random source; the test pins it, so it passes every run."
          })
        ],
        usage: usage(18_400, 11_200, 1_310)
      }
    case 2:
      return {
        goal: "Run the whole suite to make sure nothing else depended on the old jitter.",
        origin: "continuation",
        steps: [
          done(1, {
            id: `${t}-reason-1`,
            type: "reasoning",
            stage: "verification",
            text: "Other callers of backoff() rely on the default argument; the full suite covers them."
          }),
          ...cmd(`${t}-cmd-1`, "npm test", 2, 41, "> vitest run\n... 214 passed, 0 failed\n", 0, "verification"),
          done(44, {
            id: `${t}-reason-2`,
            type: "reasoning",
            stage: "plan",
            text: "Suite is green. Next: note the API change in the changelog."
          })
        ],
        usage: usage(21_900, 18_400, 420),
        failure: "model provider returned 429 Too Many Requests (rate limit); the turn was abandoned after 3 retries"
      }
    case 3:
      return {
        goal: "Retry: record the API change in CHANGELOG.md and summarise the fix.",
        origin: "retry",
        steps: [
          done(2, {
            id: `${t}-fc-1`,
            type: "file_change",
            changes: [{ path: "CHANGELOG.md", kind: "update" }],
            status: "completed",
            unified_diff: CHANGELOG_DIFF,
            additions: 3,
            deletions: 0
          }, "mutation"),
          ...cmd(
            `${t}-cmd-1`,
            "git diff --stat",
            3,
            1,
            " CHANGELOG.md          | 3 +++\n src/http/retry.ts     | 3 ++-\n test/retry.test.ts    | 2 +-\n 3 files changed, 6 insertions(+), 2 deletions(-)",
            0,
            "inspection"
          ),
          done(5, {
            id: `${t}-msg`,
            type: "agent_message",
            text: "Done: the retry test is deterministic (injected random source), the full suite passes, " +
              "and CHANGELOG.md notes the new optional parameter."
          })
        ],
        usage: usage(23_050, 21_900, 380)
      }
    default:
      return {
        goal: `Follow-up ${turn - 3}: tidy the retry module's documentation.`,
        origin: "continuation",
        steps: [
          done(1, {
            id: `${t}-reason-1`,
            type: "reasoning",
            stage: "analysis",
            text: "The doc comment still describes the jitter as always random."
          }),
          done(3, {
            id: `${t}-fc-1`,
            type: "file_change",
            changes: [{ path: "src/http/retry.ts", kind: "update" }],
            status: "completed",
            unified_diff: "--- a/src/http/retry.ts\n+++ b/src/http/retry.ts\n@@ -9,1 +9,1 @@\n" +
              "- * Jitter is random.\n+ * Jitter comes from `rng` (Math.random by default).\n",
            additions: 1,
            deletions: 1
          }, "mutation"),
          ...cmd(`${t}-cmd-1`, "npx vitest run test/retry.test.ts", 4, 4, " Tests  3 passed (3)", 0, "verification"),
          done(9, { id: `${t}-msg`, type: "agent_message", text: `Follow-up ${turn - 3} done; tests still pass.` })
        ],
        usage: usage(9_800 + turn * 100, 8_000, 240)
      }
  }
}

const iso = (ms: number): string => formatRfc3339(ms, "Z")

const addUsage = (a: Usage, b: Usage): Usage => ({
  input_tokens: a.input_tokens + b.input_tokens,
  cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
  cache_creation_tokens: a.cache_creation_tokens + b.cache_creation_tokens,
  output_tokens: a.output_tokens + b.output_tokens
})

/** The events of a simulated session of `turns` turns that began at `startMs`. */
export const demoEvents = (sessionId: string, turns: number, startMs: number): ReadonlyArray<ThreadEvent> => {
  const threadId = `thread-${sessionId}`
  const events: Array<ThreadEvent> = [{ type: "thread.started", thread_id: threadId }]
  let total: Usage = usage(0, 0, 0)
  let clock = startMs
  for (let turn = 1; turn <= turns; turn++) {
    const s = scenario(turn)
    const turnId = `turn-${turn}`
    const began = clock
    events.push({
      type: "turn.started",
      context: {
        task_id: TASK,
        turn_id: turnId,
        actor_id: ACTOR,
        origin: s.origin,
        timestamp: iso(began),
        goal: s.goal
      }
    })
    let last = began
    for (const step of s.steps) {
      last = began + step.after * 1000
      const context: ItemContext = {
        task_id: TASK,
        turn_id: turnId,
        actor_id: ACTOR,
        timestamp: iso(last),
        ...(step.activity === undefined ? {} : { activity: step.activity })
      }
      const item = step.item(context)
      events.push(step.phase === "started" ? { type: "item.started", item } : { type: "item.completed", item })
    }
    const completedAt = iso(last + 1000)
    total = addUsage(total, s.usage)
    events.push(
      s.failure === undefined
        ? { type: "turn.completed", completed_at: completedAt, usage: s.usage }
        : { type: "turn.failed", completed_at: completedAt, message: s.failure, usage: s.usage }
    )
    clock = last + 20_000
  }
  events.push({
    type: "thread.completed",
    completed_at: iso(clock),
    thread_id: threadId,
    session_id: sessionId,
    subtype: "success",
    outcome_code: "completed",
    result: "Retry test made deterministic; suite green; changelog updated.",
    usage: total,
    total_cost_usd: Math.round((total.input_tokens * 3 + total.output_tokens * 15) / 10_000) / 100,
    num_turns: turns
  })
  return events
}

/** The objective of the simulated session's goal. */
const DEMO_OBJECTIVE = "Make the flaky retry test deterministic"

const compactStamp = (ms: number): string => iso(ms).replace(/[-:]/gu, "").slice(0, 15)

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
