/**
 * The tools `logbook mcp` offers (docs/mcp.md): their names, descriptions, and the Schemas of
 * every parameter and result, as one `effect/ai` Toolkit. Every result is bounded by
 * `max_tokens` and continues with `cursor`; every item that comes from a log line carries a
 * citation (`session`, `offset`, `digest`) that the `evidence` tool accepts. All tools are
 * read-only.
 */
import { Schema } from "effect"
import { Tool, Toolkit } from "effect/ai"
import { McpToolError } from "./Budget.ts"

const session = Schema.String.annotate({
  description: "Session id: its directory name, as list_sessions returns it"
})

const maxTokens = Schema.optionalKey(Schema.Number.annotate({
  description: "Budget of the result in tokens (characters / 4), 500 to 32000; default 4000"
}))

const cursor = Schema.optionalKey(Schema.String.annotate({
  description: "The `cursor` of the previous result, to continue it (same other arguments)"
}))

const nextCursor = Schema.NullOr(Schema.String).annotate({
  description: "Pass as `cursor` (with the same other arguments) for the next page; null at the end"
})

/** Where an item was recorded: the line the `evidence` tool re-reads (byte offset and SHA-256 of the line). */
export const Citation = Schema.Struct({
  session: Schema.String,
  offset: Schema.Int,
  digest: Schema.String
})

/** A citation, or null when the item has no recorded line (a legacy fact without its source). */
const citation = Schema.NullOr(Citation)

/** One `search` hit, in the order and with the score `logbook search --json` gives. */
export const SearchHit = Schema.Struct({
  session: Schema.String,
  turn: Schema.NullOr(Schema.Int),
  chunk_id: Schema.String,
  score: Schema.Number,
  snippet: Schema.String,
  citation
})

/** `search`: ranked facts or turns. */
export const SearchTool = Tool.make("search", {
  description: "Rank every session's grounded facts (scope facts, the default) or retained turns (scope history) " +
    "by BM25 with a mild recency multiplier, as `logbook search --json` does. Each hit has a citation for `evidence`; " +
    "open a history hit's turn with `read_turn`.",
  parameters: Schema.Struct({
    query: Schema.String.annotate({ description: "Words to look for (case-insensitive)" }),
    scope: Schema.optionalKey(Schema.Literals(["facts", "history"])),
    limit: Schema.optionalKey(Schema.Number.annotate({ description: "At most N hits, 1 to 100; default 6" })),
    session: Schema.optionalKey(session.annotate({ description: "Only hits of this session" })),
    min_score: Schema.optionalKey(Schema.Number),
    now: Schema.optionalKey(Schema.Number.annotate({
      description: "Rank as if it were this Unix time in seconds (recency); default now"
    })),
    since: Schema.optionalKey(Schema.Number.annotate({
      description: "Only hits recorded at or after this Unix time in seconds"
    })),
    until: Schema.optionalKey(
      Schema.Number.annotate({ description: "Only hits recorded before this Unix time in seconds" })
    ),
    agent: Schema.optionalKey(Schema.String.annotate({
      description:
        "Only sessions of this agent (codex, claude, gemini, copilot, cline, roo, cursor, aider, opencode: the prefix of imported session ids)"
    })),
    max_tokens: maxTokens,
    cursor
  }),
  success: Schema.Struct({ hits: Schema.Array(SearchHit), cursor: nextCursor }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** One `list_sessions` row. */
export const SessionRow = Schema.Struct({
  session_id: Schema.String,
  agent: Schema.NullOr(Schema.String),
  status: Schema.String,
  turn_count: Schema.Number,
  event_count: Schema.Number,
  updated_at: Schema.String,
  live: Schema.Boolean,
  goal: Schema.NullOr(Schema.String)
})

/** `list_sessions`: the most recently updated sessions. */
export const ListSessionsTool = Tool.make("list_sessions", {
  description: "List the sessions of the store, most recently updated first (as `logbook sessions --json`), " +
    "with status, turns, events, last update and the tracked goal when there is one.",
  parameters: Schema.Struct({
    limit: Schema.optionalKey(Schema.Number.annotate({ description: "At most N sessions, 1 to 1000; default 20" })),
    status: Schema.optionalKey(Schema.String.annotate({ description: "Only sessions with this status" })),
    agent: Schema.optionalKey(Schema.String.annotate({
      description:
        "Only sessions of this agent (codex, claude, gemini, copilot, cline, roo, cursor, aider, opencode: the prefix of imported session ids)"
    })),
    max_tokens: maxTokens,
    cursor
  }),
  success: Schema.Struct({ sessions: Schema.Array(SessionRow), cursor: nextCursor }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** One turn of `show_session`. */
export const TurnLine = Schema.Struct({
  turn: Schema.Int,
  events: Schema.Int,
  started: Schema.String,
  goal: Schema.NullOr(Schema.String).annotate({
    description: "The task the turn was given (its prompt, cut at 200 characters), when the log recorded one"
  }),
  line: Schema.String,
  citation
})

/** `show_session`: one session's summary. */
export const ShowSessionTool = Tool.make("show_session", {
  description: "Summarise one session: latest goal, status, times, counters, token usage and cost, and its retained " +
    "turns one line each, with the task each turn was given " +
    "(each with a citation of its first line). Open a turn with `read_turn`.",
  parameters: Schema.Struct({ session, max_tokens: maxTokens, cursor }),
  success: Schema.Struct({
    session_id: Schema.String,
    goal: Schema.NullOr(Schema.String).annotate({ description: "The latest recorded goal (user task)" }),
    usage: Schema.NullOr(Schema.Struct({
      input_tokens: Schema.Number,
      cached_input_tokens: Schema.Number,
      cache_creation_tokens: Schema.Number,
      output_tokens: Schema.Number
    })),
    cost_usd: Schema.NullOr(Schema.Number),
    status: Schema.String,
    created_at: Schema.String,
    updated_at: Schema.String,
    turn_count: Schema.Number,
    event_count: Schema.Number,
    evicted_turns: Schema.Number,
    open_turn: Schema.NullOr(Schema.Number),
    events_bytes: Schema.Number,
    turns: Schema.Array(TurnLine),
    cursor: nextCursor
  }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** One event of `read_turn`, rendered compactly. */
export const TurnEvent = Schema.Struct({
  type: Schema.String,
  text: Schema.String,
  citation
})

/** `read_turn`: one turn's events, paged. */
export const ReadTurnTool = Tool.make("read_turn", {
  description: "One turn's events in file order, rendered compactly (messages, commands with exit code and " +
    "trimmed output, edits as paths and diff excerpts), redacted, paged by max_tokens.",
  parameters: Schema.Struct({
    session,
    turn: Schema.Number.annotate({ description: "Turn number (1 = the first turn of the session)" }),
    max_tokens: maxTokens,
    cursor
  }),
  success: Schema.Struct({
    session: Schema.String,
    turn: Schema.Int,
    events: Schema.Array(TurnEvent),
    cursor: nextCursor
  }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** A page of text (a rendering, or JSON text). */
const textPage = {
  text: Schema.String,
  total_chars: Schema.Int,
  cursor: nextCursor
}

/** `explain_session`: the explanation model. */
export const ExplainSessionTool = Tool.make("explain_session", {
  description: "Explain a session from its retained events: goal, changes, decisions, verification with freshness " +
    "and what to review first, as text (the `logbook explain` summary) or JSON (`logbook explain --json`, " +
    "whose evidence entries are citations for `evidence`). Paged by max_tokens.",
  parameters: Schema.Struct({
    session,
    format: Schema.optionalKey(Schema.Literals(["text", "json"])),
    scope: Schema.optionalKey(Schema.Literals(["task", "session"])),
    max_tokens: maxTokens,
    cursor
  }),
  success: Schema.Struct({ session: Schema.String, format: Schema.String, ...textPage }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** `evidence`: the redacted line behind a citation. */
export const EvidenceTool = Tool.make("evidence", {
  description: "Re-read exactly the line a citation names (session, byte offset, SHA-256) and return it as " +
    "redacted, pretty-printed JSON, paged. A line that changed, was evicted or never existed is an error.",
  parameters: Schema.Struct({
    session,
    offset: Schema.Number.annotate({ description: "Byte offset of the line (from a citation)" }),
    digest: Schema.String.annotate({ description: "SHA-256 of the line (from a citation)" }),
    max_tokens: maxTokens,
    cursor
  }),
  success: Schema.Struct({ citation: Citation, ...textPage }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** One grounded fact. */
export const FactRow = Schema.Struct({ session: Schema.String, fact: Schema.String, citation })

/** `facts`: the memory views' grounded facts. */
export const FactsTool = Tool.make("facts", {
  description: "The grounded facts of the sessions' memory views (derived/memory.json), sessions in name order, " +
    "facts in view order, as `logbook facts --json`; each with a citation of the line it came from.",
  parameters: Schema.Struct({
    session: Schema.optionalKey(session.annotate({ description: "Only this session" })),
    limit: Schema.optionalKey(Schema.Number.annotate({ description: "At most N facts, 1 to 1000; default 100" })),
    max_tokens: maxTokens,
    cursor
  }),
  success: Schema.Struct({ facts: Schema.Array(FactRow), cursor: nextCursor }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** `goal_progress`: the goal tracker and the progress ledger. */
export const GoalProgressTool = Tool.make("goal_progress", {
  description: "A session's goal tracker snapshot (derived/goal.json, as `logbook goal show --json`) and progress " +
    "ledger (derived/progress.json, as `logbook progress show --json`), redacted, as JSON text paged by max_tokens.",
  parameters: Schema.Struct({ session, max_tokens: maxTokens, cursor }),
  success: Schema.Struct({
    session: Schema.String,
    has_goal: Schema.Boolean,
    has_progress: Schema.Boolean,
    ...textPage
  }),
  failure: McpToolError
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/** Every tool of `logbook mcp`. */
export const LogbookTools = Toolkit.make(
  SearchTool,
  ListSessionsTool,
  ShowSessionTool,
  ReadTurnTool,
  ExplainSessionTool,
  EvidenceTool,
  FactsTool,
  GoalProgressTool
)
