/**
 * `logbook append <session>`: appends ThreadEvents read from stdin, one JSON object per line,
 * bare (`{"type":…}`) or enveloped (`{"schema_version":…,"event":…}`). The first invalid line
 * stops the command: every line before it is appended and flushed, nothing after it is read.
 * By default the durability barrier runs after each batch of input read, so a producer piping
 * events as they happen sees them flushed promptly (and `logbook events --follow` prints them).
 */
import type { InputLineProblem, ThreadEvent } from "@logbook/domain"
import { decodeInputLine } from "@logbook/domain"
import type { RawLine } from "@logbook/store"
import { EventLog, makeLineSplitter } from "@logbook/store"
import { Effect, Match, Option, Result, Stdio, Stream } from "effect"
import { Command, Flag } from "effect/cli"
import { InvalidInputLine } from "../Errors.ts"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { note, printJson, printLines, withProgress } from "../Output.ts"
import { location } from "../Root.ts"

const oneLine = (text: string): string => {
  const flat = text.replace(/\s+/gu, " ").trim()
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat
}

/** Why an input line is not an event, as the error message says it. */
const describeProblem = (problem: InputLineProblem): string =>
  Match.valueTags(problem, {
    NotUtf8: () => "not valid UTF-8",
    NotJson: ({ detail }) => `not JSON (${detail})`,
    NotObject: () => "expected a JSON object",
    Invalid: ({ error }) => oneLine(error.message),
    NoEventShape: () => `expected a ThreadEvent {"type":…} or an envelope {"schema_version":…,"event":…}`
  })

/**
 * One input line → the event it holds, `undefined` for a blank line, or why it is not an event
 * (domain `decodeInputLine`: a bare event or an envelope, read like a log line).
 */
export const parseInputLine = (bytes: Uint8Array): Result.Result<ThreadEvent | undefined, string> =>
  Result.mapError(decodeInputLine(bytes), describeProblem)

/** `append <session> [--max-events N] [--no-flush] [--json]`. */
export const appendCommand = Command.make(
  "append",
  {
    session: sessionArgument,
    maxEvents: Flag.Int("max-events").pipe(
      Flag.filter((n) => n >= 0, (n) => `--max-events must be 0 or more, got ${n}`),
      Flag.withDescription(
        "Event cap of the session: older whole turns are evicted beyond it (default 10000; 0 disables)"
      ),
      Flag.optional
    ),
    noFlush: Flag.Boolean("no-flush").pipe(
      Flag.withDescription(
        "Do not run the durability barrier after each batch of input; events are still written at turn " +
          "boundaries, every 64 KiB and when the input ends"
      ),
      Flag.withDefault(false)
    ),
    json: jsonFlag
  },
  Effect.fn("cli.append")(function*({ json, maxEvents, noFlush, session }) {
    const where = yield* location
    const stdio = yield* Stdio.Stdio
    if (yield* stdio.stdinIsTerminal) {
      yield* note("reading ThreadEvents from the terminal, one JSON object per line; end with Ctrl-D")
    }
    const manifest = yield* Effect.scoped(Effect.gen(function*() {
      const log = yield* withProgress(`opening ${session}`, (onScanProgress) =>
        EventLog.open({
          sessionsDir: where.sessionsDir,
          sessionId: session,
          maxEvents: Option.getOrUndefined(maxEvents),
          requireExclusive: true,
          onScanProgress
        }))
      const lines = makeLineSplitter()
      let lineNo = 0
      let appended = 0
      const handleLine = (line: RawLine) =>
        Effect.gen(function*() {
          lineNo++
          const parsed = parseInputLine(line.bytes)
          if (Result.isFailure(parsed)) {
            return yield* new InvalidInputLine({ session, line: lineNo, reason: parsed.failure, appended })
          }
          if (parsed.success === undefined) return
          // An event that decodes but cannot be written (a count beyond 2^53 - 1) stops the input like any invalid line.
          yield* log.append(parsed.success).pipe(
            Effect.catchTag("InvalidEvent", (error) =>
              Effect.fail(new InvalidInputLine({ session, line: lineNo, reason: error.detail, appended })))
          )
          appended++
        })
      const handleAll = (batch: ReadonlyArray<RawLine>) =>
        Effect.gen(function*() {
          for (const line of batch) yield* handleLine(line)
        })
      yield* Stream.runForEach(stdio.stdin, (chunk) =>
        Effect.gen(function*() {
          const batch = lines.push(chunk)
          yield* handleAll(batch)
          if (!noFlush && batch.length > 0) yield* log.flush
        })).pipe(
          Effect.andThen(Effect.suspend(() => handleAll(lines.end()))),
          // Whatever stops the input, the lines before it are made durable before reporting.
          Effect.catchTag("InvalidInputLine", (error) => Effect.andThen(log.flush, Effect.fail(error)))
        )
      yield* log.flush
      return { appended, manifest: yield* log.manifest }
    }))
    const m = manifest.manifest
    if (json) {
      return yield* printJson({
        session_id: session,
        appended: manifest.appended,
        turn_count: m.turn_count,
        event_count: m.event_count,
        status: m.status,
        in_turn: m.in_turn === true
      })
    }
    yield* printLines(
      `Appended ${manifest.appended} event${manifest.appended === 1 ? "" : "s"} to ${session}: ` +
        `${m.turn_count} closed turns${
          m.in_turn === true ? " + 1 open" : ""
        }, ${m.event_count} events, status ${m.status}.`
    )
  })
).pipe(
  Command.withShortDescription("Append ThreadEvents from stdin (one JSON object per line)"),
  Command.withDescription(
    "Append ThreadEvents read from stdin, one JSON object per line, bare ({\"type\":…}) or enveloped " +
      "({\"schema_version\":…,\"event\":…}); creates the session if needed. An invalid line stops the command " +
      "with exit 1 naming the line and the reason: the lines before it are appended and flushed, nothing after it."
  ),
  Command.withExamples([
    { command: "logbook append demo < events.jsonl", description: "Append a file of events to `demo`" },
    {
      command: "echo '{\"type\":\"turn.started\"}' | logbook append demo",
      description: "Append one bare event"
    }
  ])
)
