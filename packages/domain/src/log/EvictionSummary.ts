/**
 * The default cap-eviction summary (docs/format.md#eviction-summary, docs/log.md#summary-hook): a deterministic, model-free fold
 * over the evicted events that counts event types and extracts grounded facts, so what
 * the cap removed can still be explained without keeping a second copy of history.
 */
import { tokenize } from "../contract/SearchText.ts"
import type { ThreadEvent } from "../contract/ThreadEvent.ts"

/** At most this many grounded facts per summary. */
export const MAX_EVICTION_GROUNDED_FACTS = 32

/** Each grounded fact is at most this many UTF-8 bytes, the ellipsis included. */
export const MAX_EVICTION_GROUNDED_FACT_BYTES = 512

/** The running state of the summary fold. */
export interface EvictionSummaryAcc {
  readonly decodedEvents: number
  readonly eventTypes: ReadonlyMap<string, number>
  readonly facts: ReadonlyArray<string>
}

/** The empty fold state. */
export const emptyEvictionSummary: EvictionSummaryAcc = { decodedEvents: 0, eventTypes: new Map(), facts: [] }

const encoder = new TextEncoder()

// Unicode White_Space, as the reference's `split_whitespace` sees it. JavaScript's `\s` and
// `trim` differ in two code points: they treat U+FEFF as whitespace and miss U+0085 (NEL).
const WHITESPACE_RUN = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g

/** UTF-8 length of one code point (a lone surrogate is written as U+FFFD, 3 bytes, like TextEncoder). */
const utf8Size = (cp: number): number => cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4

/**
 * Whether the text's UTF-8 form is at most the fact budget, without encoding long texts: a UTF-16
 * unit is at least one byte and at most three.
 */
const fitsFactBytes = (text: string): boolean =>
  text.length > MAX_EVICTION_GROUNDED_FACT_BYTES
    ? false
    : text.length * 3 <= MAX_EVICTION_GROUNDED_FACT_BYTES ||
      encoder.encode(text).length <= MAX_EVICTION_GROUNDED_FACT_BYTES

/** Collapses whitespace runs, trims, and cuts to 512 bytes at a char boundary with `…`. */
export const normalizeFact = (raw: string): string => {
  // Every run is now one space, so trimming is dropping a leading and a trailing space.
  const spaced = raw.replace(WHITESPACE_RUN, " ")
  const collapsed = spaced.slice(spaced.startsWith(" ") ? 1 : 0, spaced.endsWith(" ") ? -1 : undefined)
  if (fitsFactBytes(collapsed)) return collapsed
  let bytes = 0
  let cut = 0
  for (const ch of collapsed) {
    const size = utf8Size(ch.codePointAt(0) ?? 0)
    if (bytes + size > MAX_EVICTION_GROUNDED_FACT_BYTES - 3) break
    bytes += size
    cut += ch.length
  }
  return collapsed.slice(0, cut) + "…"
}

/**
 * Agent message texts that agents emit as placeholders rather than answers (after whitespace
 * normalisation): Claude Code's synthetic `No response requested.` and `(no content)`.
 */
export const PLACEHOLDER_AGENT_MESSAGES: ReadonlySet<string> = new Set(["No response requested.", "(no content)"])

/** A one-word agent message shorter than this many UTF-16 units carries no fact. */
export const MIN_ONE_WORD_MESSAGE_CHARS = 20

/**
 * Whether an agent message says anything a fact could keep: false for a known placeholder, for
 * one without a single word (only punctuation, symbols or whitespace), and for a one-word message
 * shorter than {@link MIN_ONE_WORD_MESSAGE_CHARS} after normalisation (`Done.`, `4`, `OK!`), which
 * cannot be understood out of its turn. Words are what the search tokeniser splits.
 */
export const isInformativeMessage = (text: string): boolean => {
  const fact = normalizeFact(text)
  if (PLACEHOLDER_AGENT_MESSAGES.has(fact)) return false
  const words = tokenize(fact).length
  return words >= 2 || (words === 1 && fact.length >= MIN_ONE_WORD_MESSAGE_CHARS)
}

/**
 * The fact candidates one event contributes, in order (docs/log.md#summary-hook); agent messages
 * that are not {@link isInformativeMessage} contribute none.
 */
export const factCandidates = (event: ThreadEvent): ReadonlyArray<string> => {
  switch (event.type) {
    case "item.completed": {
      const item = event.item
      switch (item.type) {
        case "agent_message":
          return isInformativeMessage(item.text) ? [item.text] : []
        case "plan":
          return [item.text]
        case "file_change":
          return item.changes.map((change) => `file ${change.kind}: ${change.path}`)
        case "harness":
          return item.message === undefined ? [] : [item.message]
        default:
          return []
      }
    }
    case "turn.failed":
    case "turn.blocked":
    case "error":
      return [event.message]
    default:
      return []
  }
}

/**
 * The grounded-fact rule shared by the eviction summary and the derived memory view
 * (docs/search.md#derived-memory): normalises `candidate`, and returns the fact to add, or
 * `undefined` when it is empty, an exact duplicate of an earlier fact, or the list is full.
 */
export const acceptFact = (facts: ReadonlyArray<string>, candidate: string): string | undefined => {
  if (facts.length >= MAX_EVICTION_GROUNDED_FACTS) return undefined
  const fact = normalizeFact(candidate)
  return fact.length === 0 || facts.includes(fact) ? undefined : fact
}

/** Adds one decoded evicted event to the summary. */
export const addToEvictionSummary = (acc: EvictionSummaryAcc, event: ThreadEvent): EvictionSummaryAcc => {
  const eventTypes = new Map(acc.eventTypes)
  eventTypes.set(event.type, (eventTypes.get(event.type) ?? 0) + 1)
  let facts = acc.facts
  for (const candidate of factCandidates(event)) {
    const fact = acceptFact(facts, candidate)
    if (fact !== undefined) facts = [...facts, fact]
  }
  return { decodedEvents: acc.decodedEvents + 1, eventTypes, facts }
}

/** The persisted summary (`derived/eviction-summary-<id>.json`), keys in wire order. */
export interface EvictionSummaryFile {
  readonly session_id: string
  readonly evicted_event_count: number
  readonly event_types: Readonly<Record<string, number>>
  readonly grounded_facts: ReadonlyArray<string>
  readonly created_at: string
  /** Additive (docs/differences.md): scan-countable lines removed from `event_count`, out-of-turn records included. */
  readonly evicted_line_count: number
  /** Additive: the evicted turn range. */
  readonly first_turn: number
  readonly last_turn: number
}

/** Builds the summary file contents from the fold (event types sorted by key). */
export const evictionSummaryFile = (
  acc: EvictionSummaryAcc,
  info: { sessionId: string; createdAt: string; countedLines: number; firstTurn: number; lastTurn: number }
): EvictionSummaryFile => {
  const eventTypes: Record<string, number> = {}
  for (const key of [...acc.eventTypes.keys()].sort()) eventTypes[key] = acc.eventTypes.get(key) ?? 0
  return {
    session_id: info.sessionId,
    evicted_event_count: acc.decodedEvents,
    event_types: eventTypes,
    grounded_facts: acc.facts,
    created_at: info.createdAt,
    evicted_line_count: info.countedLines,
    first_turn: info.firstTurn,
    last_turn: info.lastTurn
  }
}
