/**
 * `logbook show <session>`: the manifest, the retained turn range, a turn index summary, the
 * lock state and the size on disk. Read-only: stale metadata is replaced by a rescan in memory,
 * never on disk.
 */
import type { Manifest } from "@logbook/domain"
import { entryAt, turnEntryJson } from "@logbook/domain"
import type { InspectedSession, Stored } from "@logbook/projections"
import { inspectSession } from "@logbook/projections"
import type { DiskUsage } from "@logbook/store"
import { diskUsage, SessionFs } from "@logbook/store"
import { Effect, Option } from "effect"
import { Command } from "effect/cli"
import { jsonFlag, sessionArgument } from "../Flags.ts"
import { formatBytes, printAll, printJson, table, withProgress } from "../Output.ts"
import { location } from "../Root.ts"

/** Turn index entries listed in the text output before eliding the middle. */
const LISTED_ENTRIES = 12

/** The retained turns: first retained, last closed, the open one, and how many were evicted. */
export const turnRange = (m: Manifest) => {
  const base = Math.max(m.retained_turn_base ?? 1, 1)
  return {
    first: m.turn_count >= base ? base : undefined,
    last: m.turn_count >= base ? m.turn_count : undefined,
    open: m.in_turn === true ? m.turn_count + 1 : undefined,
    evicted: base - 1
  }
}

const storedState = <A>(s: Stored<A>): string =>
  s._tag === "Present" ? "present" : s._tag === "Missing" ? "missing" : "invalid"

const metadataLine = (i: InspectedSession): string => {
  if (i.fresh) return "up to date (manifest and turn index describe the log exactly)"
  const why = i.manifest._tag !== "Present"
    ? `manifest.json is ${storedState(i.manifest)}`
    : i.index._tag !== "Present"
    ? `index/turns.json is ${storedState(i.index)}`
    : i.manifest.value.persisted_file_len !== i.fileLen
    ? `manifest describes ${
      i.manifest.value.persisted_file_len ?? "an unknown number of"
    } bytes, the log has ${i.fileLen}`
    : "the turn index does not match the manifest"
  return `stale (${why}); the figures above come from a read-only rescan — ` +
    `the next open rewrites the metadata; \`logbook verify ${i.name}\` shows every difference`
}

/** What `show` describes, wherever the session is kept (a session directory, or the fleet). */
export interface ShowView {
  readonly inspection: InspectedSession
  /** The session directory, or `null` when the session is not in a directory here (the fleet). */
  readonly dir: string | null
  readonly pinned: boolean
  /** `session.lock` is a symbolic link (no lock; never followed). */
  readonly lockIsLink?: boolean
  /** `retention-pin.json` is a symbolic link (it pins all the same; never followed). */
  readonly pinIsLink?: boolean
  readonly usage: DiskUsage
}

/** The `show --json` object. */
export const showJson = (view: ShowView) => {
  const i = view.inspection
  const m = i.effectiveManifest
  const range = turnRange(m)
  const entries = i.effectiveEntries
  return {
    session_id: i.name,
    dir: view.dir,
    manifest: m,
    metadata: {
      fresh: i.fresh,
      manifest: storedState(i.manifest),
      turn_index: storedState(i.index),
      pending_cap_rewrite: i.marker._tag !== "Missing"
    },
    retained_turns: range.first === undefined ? null : { first: range.first, last: range.last },
    open_turn: range.open ?? null,
    evicted_turns: range.evicted,
    turn_index: {
      entries: entries.length,
      events_in_turns: entries.reduce((n, e) => n + e.event_count, 0),
      turns: entries.map(turnEntryJson)
    },
    lock: view.lockIsLink === true ? "link" : i.live ? "held" : "free",
    live: i.live,
    pinned: view.pinned,
    ...(view.pinIsLink === true ? { pin_is_link: true } : {}),
    events_bytes: i.fileLen,
    size_on_disk: { bytes: view.usage.bytes, files: view.usage.files }
  }
}

/**
 * The `show` text lines. `directory` is what the Directory line says; `afterSession` lines go
 * right after the Session line (the fleet's origin host).
 */
export const showText = (
  view: ShowView,
  directory: string,
  afterSession: ReadonlyArray<string> = []
): Array<string> => {
  const i = view.inspection
  const m = i.effectiveManifest
  const range = turnRange(m)
  const turns = range.first === undefined
    ? range.evicted > 0 ? `${m.turn_count} closed, all evicted by the event cap` : "none closed yet"
    : `${m.turn_count} closed, retained ${range.first}-${range.last}` +
      (range.evicted > 0 ? ` (1-${range.evicted} evicted by the event cap)` : "")
  // Only the listed entries become objects: the index of a large session stays columnar.
  const index = i.effectiveTable
  const entries = { length: index.length }
  const listedAt = index.length <= LISTED_ENTRIES
    ? Array.from({ length: index.length }, (_, k) => k)
    : [
      ...Array.from({ length: LISTED_ENTRIES / 2 }, (_, k) => k),
      ...Array.from({ length: LISTED_ENTRIES / 2 }, (_, k) => index.length - LISTED_ENTRIES / 2 + k)
    ]
  const listed = listedAt.map((k) => entryAt(index, k))
  const rows = table(
    ["TURN", "BYTES", "EVENTS", "STARTED"],
    listed.map((e) => [
      `#${e.turn_number}${e.turn_number === range.open ? " (open)" : ""}`,
      `${e.start_offset}-${e.end_offset}`,
      String(e.event_count),
      e.ts
    ]),
    [2]
  ).map((row) => `  ${row}`)
  if (entries.length > LISTED_ENTRIES) {
    rows.splice(1 + LISTED_ENTRIES / 2, 0, `  ... ${entries.length - LISTED_ENTRIES} more ...`)
  }
  return [
    `Session       ${i.name}${m.session_id !== i.name ? ` (recorded id: ${m.session_id})` : ""}`,
    ...afterSession,
    `Directory     ${directory}`,
    `Status        ${m.status}${m.status === "completed" ? " (thread.completed recorded)" : ""}`,
    `Created       ${m.created_at}`,
    `Updated       ${m.updated_at}`,
    `Turns         ${turns}; ${range.open === undefined ? "no open turn" : `turn ${range.open} is open`}`,
    `Events        ${m.event_count} retained in ${formatBytes(i.fileLen)} of events.jsonl`,
    `Turn index    ${entries.length} entr${entries.length === 1 ? "y" : "ies"}`,
    ...(entries.length > 0 ? rows : []),
    `Lock          ${
      view.lockIsLink === true
        ? "link: session.lock is a symbolic link, not a lock (never followed); whether a process has the " +
          "session open cannot be told, so retention keeps it"
        : i.live
        ? "held: a live process has the session open"
        : "free: no process has it open"
    }`,
    `Pinned        ${
      view.pinIsLink === true
        ? "yes: retention-pin.json is a symbolic link (never followed), which pins all the same"
        : view.pinned
        ? "yes: retention never removes it"
        : "no"
    }`,
    `Size on disk  ${formatBytes(view.usage.bytes)} in ${view.usage.files} files`,
    `Metadata      ${metadataLine(i)}`
  ]
}

/** `show <session> [--json]`. */
export const showCommand = Command.make(
  "show",
  { session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.show")(function*({ json, session }) {
    const where = yield* location
    const fs = yield* SessionFs
    const i = yield* withProgress(
      `rescanning ${session}`,
      (onProgress) => inspectSession(where.sessionsDir, session, { onProgress })
    )
    const usage = yield* diskUsage(i.paths.dir)
    const pin = yield* fs.lstat(i.paths.pin)
    const lock = yield* fs.lstat(i.paths.lock)
    const view: ShowView = {
      inspection: i,
      dir: i.paths.dir,
      pinned: Option.isSome(pin),
      lockIsLink: Option.isSome(lock) && lock.value.type === "SymbolicLink",
      pinIsLink: Option.isSome(pin) && pin.value.type === "SymbolicLink",
      usage
    }
    if (json) return yield* printJson(showJson(view))
    yield* printAll(showText(view, i.paths.dir))
  })
).pipe(
  Command.withShortDescription("Show a session: manifest, turns, lock state, size on disk"),
  Command.withDescription(
    "Show one session: manifest, retained turn range, turn index summary, lock state and size on disk. " +
      "Read-only: when the stored metadata is stale the figures come from a rescan in memory."
  ),
  Command.withExamples([
    { command: "logbook show demo", description: "Describe the session `demo`" },
    { command: "logbook show demo --json", description: "The same as one JSON object" }
  ])
)
