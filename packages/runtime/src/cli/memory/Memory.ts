/**
 * `logbook memory write|derive <session>`, `logbook facts` and `logbook search <query>`: the
 * session memory view (`derived/memory.json`) and ranked search over every session's facts or
 * full history (docs/search.md). `search` keeps its index snapshot under the sessions root; the
 * other read commands write nothing.
 */
import { decodeMemoryViewText, distinctTokens, terminalSafe, tokenize } from "@logbook/domain"
import type { MemorySearchResult } from "@logbook/projections"
import type { SkippedSession } from "@logbook/projections"
import {
  deriveSessionMemory,
  findSession,
  queryFacts,
  SearchBuildProgress,
  searchMemory,
  sessionMemoryFacts,
  SkippedSessions
} from "@logbook/projections"
import { writeMemoryView } from "@logbook/store"
import { Effect, Option, Result, Stdio, Stream } from "effect"
import { Command, Flag } from "effect/cli"
import { Buffer } from "node:buffer"
import { CommandFailed } from "../Errors.ts"
import { jsonFlag, minScoreFlag, nowFlag, searchLimitFlag, searchQueryArgument, sessionArgument } from "../Flags.ts"
import {
  formatBytes,
  note,
  printAll,
  printAllVerbatim,
  printJson,
  printLines,
  shellQuote,
  withProgressLine
} from "../Output.ts"
import { Invocation, location } from "../Root.ts"

/** A memory view on stdin larger than this is refused (a view is a summary, not a log). */
const MAX_VIEW_BYTES = 16 * 1024 * 1024

const readStdin = Effect.gen(function*() {
  const stdio = yield* Stdio.Stdio
  const chunks: Array<Uint8Array> = []
  let size = 0
  yield* Stream.runForEach(stdio.stdin, (chunk) =>
    Effect.gen(function*() {
      size += chunk.length
      if (size > MAX_VIEW_BYTES) {
        return yield* new CommandFailed({
          detail: `the memory view on stdin is larger than ${MAX_VIEW_BYTES} bytes`,
          hint: "a memory view holds a summary and grounded facts; keep history in the log"
        })
      }
      chunks.push(chunk)
    }))
  return Buffer.concat(chunks).toString("utf8")
})

/** `memory write <session>`: a view from stdin, validated, written atomically unless equivalent. */
export const memoryWriteCommand = Command.make(
  "write",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.memory.write")(function*({ json, session }) {
    const where = yield* location
    yield* findSession(where.sessionsDir, session)
    const decoded = decodeMemoryViewText(yield* readStdin)
    if (Result.isFailure(decoded)) {
      return yield* new CommandFailed({
        detail: `the memory view on stdin is invalid: ${decoded.failure.message.replace(/\s+/gu, " ")}`,
        hint: "pipe one JSON object with summary, task_summary, spec_summary, evaluation_summary, touched_files, " +
          "grounded_facts, history_artifact_path and generated_at (see docs/search.md in the Logbook repository)"
      })
    }
    const result = yield* writeMemoryView(where.sessionsDir, session, decoded.success)
    if (json) return yield* printJson(result)
    yield* printLines(
      result.written ? `wrote ${result.path}` : `unchanged: ${result.path} already holds an equivalent view`
    )
  })
).pipe(
  Command.withDescription(
    "Write a session's memory view (derived/memory.json) from stdin: one JSON object in the session memory " +
      "envelope (schema 3). It is validated, stamped (session_id, schema_version, created_at kept, updated_at now) " +
      "and written atomically; nothing is written when the stored view is content-equivalent."
  ),
  Command.withExamples([
    { command: "logbook memory write demo < memory.json", description: "Store the host's view of session `demo`" }
  ])
)

/** `memory derive <session>`: a view derived from the log, unless the host wrote one. */
export const memoryDeriveCommand = Command.make(
  "derive",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.memory.derive")(function*({ json, session }) {
    const where = yield* location
    const result = yield* deriveSessionMemory(where.sessionsDir, session)
    if (json) return yield* printJson(result)
    yield* printLines(
      result.keptHostView
        ? `kept ${result.path}: the host wrote its own view, a derived one never replaces it`
        : result.written
        ? `wrote ${result.path}`
        : `unchanged: ${result.path} already says the same`
    )
  })
).pipe(
  Command.withDescription(
    "Derive a session's memory view from its log: goals, agent messages, plans, decisions, file changes, " +
      "failures and verification outcomes become grounded facts with their source (turn and byte offset). " +
      "A view written by the host is never replaced."
  ),
  Command.withExamples([
    { command: "logbook memory derive demo", description: "Build derived/memory.json for session `demo`" }
  ])
)

/** `memory`: the session memory view. */
export const memoryCommand = Command.make("memory").pipe(
  Command.withDescription("Write or derive a session's memory view (see `memory write`, `memory derive`)."),
  Command.withSubcommands([memoryWriteCommand, memoryDeriveCommand])
)

/** Prints a session a store-wide reader skipped to stderr, so a hostile file never hides it silently. */
const reportSkippedSession = (skipped: SkippedSession) =>
  note(`logbook: skipped session ${skipped.session}: cannot read ${skipped.path}: ${skipped.detail}`)

/** `facts [--session ID] [--limit N]`. */
export const factsCommand = Command.make(
  "facts",
  {
    session: Flag.String("session").pipe(
      Flag.filter((id) => id.length > 0, () => "--session is empty"),
      Flag.withDescription("Only this session"),
      Flag.optional
    ),
    limit: Flag.Int("limit").pipe(
      Flag.filter((n) => n >= 1, (n) => `--limit must be at least 1, got ${n}`),
      Flag.withDescription("At most N facts (default 100)"),
      Flag.withDefault(100)
    ),
    json: jsonFlag
  },
  Effect.fn("cli.facts")(function*({ json, limit, session }) {
    const where = yield* location
    // One session reads as the reference's `session_memory_facts`: empty facts dropped, a corrupt
    // view a `CorruptFile` naming it (exit 5); the store-wide listing skips what it cannot read.
    const facts = Option.isSome(session)
      ? yield* Effect.andThen(
        findSession(where.sessionsDir, session.value),
        sessionMemoryFacts(where.sessionsDir, session.value, limit)
      )
      : yield* queryFacts(where.sessionsDir, limit).pipe(Effect.provideService(SkippedSessions, reportSkippedSession))
    if (json) return yield* printJson(facts)
    if (facts.length === 0) {
      return yield* printLines(
        Option.isSome(session)
          ? `No facts for ${session.value} (its derived/memory.json is missing or lists none; ` +
            "`memory derive` builds one from the log)."
          : "No facts (no session has a derived/memory.json with facts; `memory derive <session>` builds one)."
      )
    }
    yield* printAll(facts.map((f) => `${f.session_id}  ${f.fact}`))
  })
).pipe(
  Command.withDescription(
    "List the grounded facts of the sessions' memory views, sessions in name order, facts in view order. Read-only. " +
      "With --session, empty facts are dropped and a corrupt derived/memory.json is an error naming the file (exit 5)."
  ),
  Command.withExamples([{ command: "logbook facts --session demo", description: "The facts of session `demo`" }])
)

const highlight = (text: string, terms: ReadonlySet<string>): string =>
  text.replace(
    /[\p{Alphabetic}\p{N}]+/gu,
    (word) => (terms.has(word.toLowerCase()) ? `\u001b[1m${word}\u001b[22m` : word)
  )

/**
 * One line of `search` output: score, session and chunk (or turn), and the snippet with the
 * matched words in bold when `terms` is given (stdout is a terminal). `fleet search` prints the same.
 * Recorded text is made terminal-safe before the bold is added, so the only escapes are Logbook's.
 */
export const resultLine = (r: MemorySearchResult, terms: ReadonlySet<string> | undefined): string => {
  const where = terminalSafe(r.turn === undefined ? r.chunk_id : `${r.session} turn ${r.turn}`)
  const snippet = terminalSafe(r.snippet)
  return `${r.score.toFixed(3)}  ${where}  ${terms === undefined ? snippet : highlight(snippet, terms)}`
}

/** Prints {@link resultLine}s as they are (already terminal-safe; `printLines` would escape the bold). */
export const printResultLines = (results: ReadonlyArray<MemorySearchResult>, terms: ReadonlySet<string> | undefined) =>
  printAllVerbatim(results.map((r) => resultLine(r, terms)))

/** `search <query> [--scope facts|history] [--limit N] [--min-score S] [--now UNIX_SECONDS]` (`--in`, `--max` as aliases). */
export const searchCommand = Command.make(
  "search",
  {
    query: searchQueryArgument,
    scope: Flag.Literals("scope", ["facts", "history"]).pipe(
      Flag.withAlias("in"),
      Flag.withDescription("facts: the memory views' grounded facts; history: every retained turn (also --in)"),
      Flag.withDefault("facts")
    ),
    limit: searchLimitFlag,
    minScore: minScoreFlag,
    now: nowFlag,
    json: jsonFlag
  },
  Effect.fn("cli.search")(function*({ json, limit, minScore, now, query, scope }) {
    const where = yield* location
    // A first build of a large store takes a while: a progress line on a terminal says how far it is.
    const results = yield* withProgressLine((report) =>
      searchMemory(where.sessionsDir, query, {
        scope,
        maxResults: limit,
        minScore,
        now: Option.getOrUndefined(now)
      }).pipe(
        Effect.provideService(SkippedSessions, reportSkippedSession),
        Effect.provideService(
          SearchBuildProgress,
          (p) =>
            Effect.sync(() =>
              report?.(`indexing ${scope}: ${p.done} of ${p.total} sessions, ${formatBytes(p.bytes)} read`)
            )
        )
      )
    )
    if (json) return yield* printJson(results)
    if (results.length === 0) {
      return yield* printLines(
        tokenize(query).length === 0 ? "No words to search for in the query." : `No ${scope} match "${query}".`
      )
    }
    const stdio = yield* Stdio.Stdio
    const terms = (yield* stdio.stdoutIsTerminal) ? new Set(distinctTokens(query)) : undefined
    yield* printResultLines(results, terms)
    if (scope === "history") {
      const first = results[0]
      if (first !== undefined) {
        const cli = [yield* Invocation, ...where.flags.map(shellQuote)].join(" ")
        yield* printLines("", `Open a turn with: ${cli} turn ${shellQuote(first.session)} ${first.turn ?? 1}`)
      }
    }
  })
).pipe(
  Command.withDescription(
    "Rank every session's grounded facts (--scope facts, the default) or retained turns (--scope history) by BM25 " +
      "(k1 1.2, b 0.75) times a mild recency multiplier (at most +10 %, half-life 30 days); ties by chunk id. " +
      "Keeps an on-disk index under the sessions root (docs/search.md) so later searches read only their terms and " +
      "re-index only changed sessions."
  ),
  Command.withExamples([
    { command: "logbook search \"flaky login test\"", description: "The facts that best match" },
    { command: "logbook search websocket --scope history --limit 3", description: "The three best-matching turns" }
  ])
)
