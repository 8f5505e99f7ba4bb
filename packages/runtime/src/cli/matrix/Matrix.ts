/**
 * `logbook matrix show <session>`: the matrix orchestration state of a session as replayed from
 * its `matrix.updated` checkpoints (docs/matrix.md#replay) — lifecycle, revision, generation and every
 * task with its status and attempts. Read-only: the session is not opened. Replay fails closed,
 * and so does the command: an invalid history is an integrity problem (exit 5) with the reason.
 */
import type { MatrixAttempt, MatrixSnapshot, MatrixTaskState } from "@logbook/domain"
import { encodeMatrixSnapshotJson } from "@logbook/domain"
import { findSession, matrixStateOfEventsFile } from "@logbook/projections"
import { Effect, Result } from "effect"
import { Command } from "effect/cli"
import { MatrixReplayFailed } from "../Errors.ts"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { printJson, printLines, shellQuote, table } from "../Output.ts"
import { location } from "../Root.ts"

/** What to do about a failed replay: locate the checkpoint the message names by its byte offset. */
const replayHint = (session: string): string =>
  "the checkpoint at the byte offset named above is invalid history; " +
  `\`logbook events ${shellQuote(session)} --offsets\` prints every event with the byte offset of its line ` +
  "(lines that do not decode are noted on stderr with theirs) — a host must not admit work for this " +
  "session's matrices until it is repaired"

/** How far the last attempt of a task got, in a few words. */
const attemptState = (attempt: MatrixAttempt): string => {
  const generation = attempt.generation === null ? "" : ` @${attempt.generation}`
  if (attempt.outcome === null) {
    return `${attempt.phase}${generation}: ${
      attempt.launch_requested ? "launched, no report yet" : "reserved, not launched"
    }`
  }
  return `${attempt.phase}${generation}: ${attempt.outcome}, ${
    attempt.cleanup_confirmed ? "cleaned up" : "cleanup pending"
  }`
}

const taskRow = (task: MatrixTaskState): Array<string> => {
  const last = task.attempts.at(-1)
  return [
    task.id,
    task.status,
    String(task.attempts.length),
    String(task.automatic_retries),
    last === undefined ? "-" : attemptState(last)
  ]
}

const statusCounts = (tasks: ReadonlyArray<MatrixTaskState>): string => {
  const counts = new Map<string, number>()
  for (const task of tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1)
  return [...counts].map(([status, n]) => `${n} ${status}`).join(", ")
}

const matrixLines = (s: MatrixSnapshot): Array<string> => [
  "",
  `Matrix ${s.spec.id}`,
  `  Lifecycle   ${s.lifecycle}${
    s.lifecycle === "blocked" ? " (admission closed until a coordinator retries or confirms cleanup)" : ""
  }`,
  `  Revision    ${s.revision}`,
  `  Generation  ${s.generation ?? "none (not verifying)"}`,
  `  Tasks       ${s.tasks.length} (${statusCounts(s.tasks)})`,
  ...table(["TASK", "STATUS", "ATTEMPTS", "RETRIES", "LAST ATTEMPT"], s.tasks.map(taskRow), [2, 3])
    .map((row) => `    ${row}`)
]

/** `matrix show <session> [--json]`. */
export const matrixShowCommand = Command.make(
  "show",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.matrix.show")(function*({ json, session }) {
    const where = yield* location
    const paths = yield* findSession(where.sessionsDir, session)
    const replayed = yield* Effect.result(matrixStateOfEventsFile(paths.events))
    if (Result.isFailure(replayed)) {
      const error = replayed.failure
      if (error._tag === "StoreIoError") return yield* error
      return yield* new MatrixReplayFailed({ session, reason: error.message, hint: replayHint(session) })
    }
    const matrices = [...replayed.success.values()]
    if (json) {
      return yield* printJson(matrices.map((s): unknown => JSON.parse(encodeMatrixSnapshotJson(s))))
    }
    if (matrices.length === 0) {
      return yield* printLines(`No matrices in session ${session} (no matrix.updated checkpoint in its log).`)
    }
    yield* printLines(
      `Session ${session}: ${matrices.length} ${matrices.length === 1 ? "matrix" : "matrices"}, ` +
        "replayed from the latest checkpoints in events.jsonl",
      ...matrices.flatMap(matrixLines)
    )
  })
).pipe(
  Command.withDescription(
    "Show the matrices of a session, replayed from its matrix.updated checkpoints: lifecycle, revision, " +
      "verification generation, and every task with its status, attempts, automatic retries and last attempt. " +
      "Read-only. Replay fails closed: an invalid checkpoint history exits 5 with the reason."
  ),
  Command.withExamples([
    { command: "logbook matrix show demo", description: "The matrices of the session `demo`" },
    { command: "logbook matrix show demo --json", description: "The replayed snapshots as a JSON array" }
  ])
)

/** `matrix`: matrix orchestration state (`matrix show <session>`). */
export const matrixCommand = Command.make("matrix").pipe(
  Command.withDescription("Inspect the matrix orchestration state recorded in a session (see `matrix show`)."),
  Command.withSubcommands([matrixShowCommand])
)
