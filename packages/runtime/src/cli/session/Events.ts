/**
 * `logbook events <session> [--follow] [--offsets]` and `logbook turn <session> <n>`: events as
 * JSONL, one bare ThreadEvent per line in canonical encoding (with `--offsets`, wrapped as
 * `{"offset":N,"event":…}` with the byte offset of its line in `events.jsonl`), read straight
 * from `events.jsonl` without opening (locking or repairing) the session. Lines that are not
 * valid records are reported on stderr with their byte offsets and skipped. An event with a count
 * beyond 2^53 − 1 is printed as its line stores it, digits exact (docs/format-notes.md#u64-counts).
 * On a terminal the events are redacted and terminal-safe (docs/security.md); `--raw`, or any
 * pipe or file, gets them as recorded, so `events | logbook append` copies a session.
 */
import { encodeEventForDisplay, redactJson, terminalSafeJson } from "@logbook/domain"
import type { LogRecord } from "@logbook/projections"
import { findSession, followEventRecords, readEventRecords, readTurn } from "@logbook/projections"
import type { SessionFs, StoreIoError } from "@logbook/store"
import { Effect, Stdio, Stream } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { sessionArgument } from "../Flags.ts"
import { note, streamOut, withProgress } from "../Output.ts"
import { location } from "../Root.ts"

const skippedNote = (record: LogRecord): string | undefined => {
  switch (record._tag) {
    case "Event":
      return undefined
    case "Skipped":
      return `note: skipped ${record.kind} line at byte ${record.offset} (${record.length} bytes): ${record.reason}`
    case "Rewritten":
      return `note: events.jsonl was rewritten by cap eviction (${record.previousLength} -> ${record.length} bytes); ` +
        "following continues at its new end — events flushed during the rewrite may not be shown, " +
        "`logbook events <session>` prints the whole retained log"
  }
}

/** Options of {@link printRecords}. */
export interface PrintOptions {
  /** Wrap each event as `{"offset":N,"event":…}`, N being the byte offset of its line. */
  readonly offsets?: boolean | undefined
  /** Redact each event (the values of secret-named keys, secrets in strings) and escape C1 controls. */
  readonly redact?: boolean | undefined
}

/** One event's JSON as shown on a terminal: redacted, same key order, C1 controls escaped. */
export const redactedEventJson = (json: string): string =>
  terminalSafeJson(JSON.stringify(redactJson(JSON.parse(json))))

/** Whether `events` / `turn` redact: on a terminal unless `--raw` (a pipe or file gets the recorded events). */
export const redactsOutput = (raw: boolean) =>
  Effect.gen(function*() {
    if (raw) return false
    const stdio = yield* Stdio.Stdio
    return yield* stdio.stdoutIsTerminal
  })

const rawFlag = Flag.Boolean("raw").pipe(
  Flag.withDescription(
    "Print the events as recorded, secrets included, even on a terminal (output to a pipe or file is always as recorded)"
  ),
  Flag.withDefault(false)
)

/**
 * Prints the events of a record stream as JSONL on stdout (bare events, or wrapped with their
 * byte offsets) and the other records as notes on stderr.
 */
export const printRecords = <R>(records: Stream.Stream<LogRecord, StoreIoError, R>, options: PrintOptions = {}) =>
  streamOut(records.pipe(
    Stream.tap((record) => {
      const text = skippedNote(record)
      return text === undefined ? Effect.void : note(text)
    }),
    Stream.filter((record) => record._tag === "Event"),
    Stream.map((record) => {
      const json = record.storedText ?? encodeEventForDisplay(record.event)
      const shown = options.redact === true ? redactedEventJson(json) : json
      return options.offsets === true ? `{"offset":${record.offset},"event":${shown}}\n` : `${shown}\n`
    })
  ))

/** `events <session> [--follow] [--offsets]`. */
export const eventsCommand = Command.make(
  "events",
  {
    session: sessionArgument,
    follow: Flag.Boolean("follow").pipe(
      Flag.withAlias("f"),
      Flag.withDescription(
        "Keep printing new events as they are flushed (a partly written last line waits for its newline) " +
          "until interrupted with Ctrl-C"
      ),
      Flag.withDefault(false)
    ),
    offsets: Flag.Boolean("offsets").pipe(
      Flag.withDescription(
        "Print each event as {\"offset\":N,\"event\":…}, N being the byte offset of its line in events.jsonl " +
          "(the offset `verify` and `matrix show` name); works with --follow"
      ),
      Flag.withDefault(false)
    ),
    raw: rawFlag
  },
  Effect.fn("cli.events")(function*({ follow, offsets, raw, session }) {
    const where = yield* location
    const paths = yield* findSession(where.sessionsDir, session)
    const records: Stream.Stream<LogRecord, StoreIoError, SessionFs> = follow
      ? followEventRecords(paths.events)
      : readEventRecords(paths.events)
    yield* printRecords(records, { offsets, redact: yield* redactsOutput(raw) })
  })
).pipe(
  Command.withShortDescription("Print all retained events as JSONL; --follow keeps printing new ones"),
  Command.withDescription(
    "Print every retained event of a session as JSONL (bare events, oldest first; with --offsets each " +
      "wrapped with the byte offset of its line). Read-only; malformed lines are skipped and reported on " +
      "stderr with their byte offsets. On a terminal the events are redacted; --raw (or a pipe) prints them as recorded."
  ),
  Command.withExamples([
    { command: "logbook events demo", description: "All retained events of `demo`" },
    { command: "logbook events demo --follow", description: "Then keep printing events as they are flushed" },
    { command: "logbook events demo --offsets", description: "Each event with the byte offset of its line" }
  ])
)

/** `turn <session> <n>`. */
export const turnCommand = Command.make(
  "turn",
  {
    session: sessionArgument,
    turn: Argument.Int("n").pipe(Argument.withDescription("Turn number (1 = the first turn of the session)")),
    raw: rawFlag
  },
  Effect.fn("cli.turn")(function*({ raw, session, turn }) {
    const where = yield* location
    const located = yield* withProgress(
      `rescanning ${session}`,
      (onProgress) => readTurn(where.sessionsDir, session, turn, { onProgress })
    )
    yield* printRecords(located.records, { redact: yield* redactsOutput(raw) })
  })
).pipe(
  Command.withShortDescription("Print one turn's events as JSONL (exit 3 never existed, 4 evicted)"),
  Command.withDescription(
    "Print the events of one turn as JSONL (bare events, in file order; an open turn too). " +
      "Exit 3 when the turn never existed, 4 when cap eviction removed it. Read-only. " +
      "On a terminal the events are redacted; --raw (or a pipe) prints them as recorded."
  ),
  Command.withExamples([
    { command: "logbook turn demo 1", description: "The events of turn 1 of `demo`" }
  ])
)
