/**
 * Verification of a session, read-only: a forced rescan compared with the metadata as stored —
 * counters, `persisted_file_len`, index validity and consistency, the index entries themselves —
 * plus every damaged line with its byte offset. The rescan is the inspector's, so `verify`
 * judges a directory exactly as the next `EventLog.open` would.
 */
import type { TurnEntry, TurnTable } from "@logbook/domain"
import {
  entryAt,
  isTableConsistent,
  isTableValid,
  sanitizeSessionId,
  sessionDirName,
  turnTableOf
} from "@logbook/domain"
import type { SessionPaths } from "@logbook/store"
import { SessionFs } from "@logbook/store"
import { Effect } from "effect"
import * as NodePath from "node:path"
import type { InspectOptions, SessionInspection, SessionScan } from "./Inspection.ts"
import { inspectWithScan } from "./Inspection.ts"

/** The kinds of problem `verifySession` reports. */
export type FindingKind =
  | "torn-tail"
  | "malformed-lines"
  | "undecodable-lines"
  | "events-missing"
  | "manifest-missing"
  | "manifest-invalid"
  | "manifest-mismatch"
  | "index-missing"
  | "index-invalid"
  | "index-out-of-bounds"
  | "index-inconsistent"
  | "index-mismatch"
  | "pending-cap-rewrite"
  | "derived-path"

/** One problem found by `verifySession`, described for a person. */
export interface Finding {
  readonly kind: FindingKind
  readonly message: string
}

/** The result of `verifySession`: the inspection with its forced rescan, and every finding. */
export interface VerifyReport {
  readonly inspection: SessionInspection
  readonly scan: SessionScan
  readonly findings: ReadonlyArray<Finding>
}

const sameSpan = (a: TurnTable, b: TurnTable, i: number): boolean =>
  a.turnAt(i) === b.turnAt(i) && a.startAt(i) === b.startAt(i) && a.endAt(i) === b.endAt(i) &&
  a.eventCountAt(i) === b.eventCountAt(i)

const entryOrUndefined = (t: TurnTable, i: number): TurnEntry | undefined => i < t.length ? entryAt(t, i) : undefined

const describeEntry = (e: TurnEntry | undefined): string =>
  e === undefined
    ? "no entry"
    : `turn ${e.turn_number} [${e.start_offset}, ${e.end_offset}) with ${e.event_count} events`

/** The findings for an inspection and its rescan; pure. */
export const compareWithScan = (inspection: SessionInspection, scan: SessionScan): ReadonlyArray<Finding> => {
  const findings: Array<Finding> = []
  const add = (kind: FindingKind, message: string) => findings.push({ kind, message })
  if (scan.tornTail !== undefined) {
    add(
      "torn-tail",
      `events.jsonl ends with an unterminated line at byte ${scan.tornTail.offset} (${scan.tornTail.length} bytes: ` +
        `${scan.tornTail.reason}); the next open terminates it with a newline`
    )
  }
  if (scan.malformedCount > 0) {
    const first = scan.malformed.map((p) => `byte ${p.offset}: ${p.reason}`).slice(0, 3).join("; ")
    add(
      "malformed-lines",
      `${scan.malformedCount} line(s) are skipped by the scan (not counted): ${first}` +
        (scan.malformedCount > 3 ? "; ..." : "")
    )
  }
  if (scan.undecodableCount > 0) {
    const first = scan.undecodable.map((p) => `byte ${p.offset}: ${p.reason}`).slice(0, 3).join("; ")
    add(
      "undecodable-lines",
      `${scan.undecodableCount} counted line(s) do not decode and are dropped by turn reconstruction: ${first}` +
        (scan.undecodableCount > 3 ? "; ..." : "")
    )
  }
  const m = inspection.manifest
  if (
    !inspection.eventsPresent && m._tag === "Present" &&
    (m.value.event_count > 0 || (m.value.persisted_file_len ?? 0) > 0)
  ) {
    add("events-missing", `events.jsonl is missing but the manifest describes ${m.value.event_count} events`)
  }
  if (m._tag === "Missing") add("manifest-missing", "manifest.json is missing; the next open rebuilds it by rescanning")
  if (m._tag === "Invalid") add("manifest-invalid", `manifest.json is invalid (${m.reason})`)
  if (m._tag === "Present") {
    const stored = m.value
    const mismatch = (field: string, storedValue: unknown, scanned: unknown) => {
      if (storedValue !== scanned) {
        add(
          "manifest-mismatch",
          `manifest ${field} is ${JSON.stringify(storedValue) ?? "absent"} but the log gives ${JSON.stringify(scanned)}`
        )
      }
    }
    mismatch("persisted_file_len", stored.persisted_file_len, scan.fileLen)
    mismatch("event_count", stored.event_count, scan.state.eventCount)
    mismatch("turn_count", stored.turn_count, scan.state.turnCount)
    mismatch("status", stored.status, scan.state.status)
    mismatch("in_turn", stored.in_turn, scan.state.inTurn)
    mismatch("retained_turn_base", stored.retained_turn_base ?? 1, scan.turnBase)
    // The id must be the one this directory is named after (Logbook's name, or a reference store's).
    const dirName = NodePath.basename(inspection.paths.dir)
    if (sessionDirName(stored.session_id) !== dirName && sanitizeSessionId(stored.session_id) !== dirName) {
      add(
        "manifest-mismatch",
        `manifest session_id is ${JSON.stringify(stored.session_id)}, but the directory ${dirName} holds session ` +
          "ids named after it (an edited or copied manifest)"
      )
    }
  }
  const idx = inspection.index
  if (idx._tag === "Missing") {
    add("index-missing", "index/turns.json is missing; the next open rebuilds it by rescanning")
  }
  if (idx._tag === "Invalid") add("index-invalid", `index/turns.json is invalid (${idx.reason})`)
  if (idx._tag === "Present") {
    // Column by column: the stored index of a large session is read from its sidecar, not as objects.
    const entries = inspection.indexTable ?? turnTableOf(idx.value)
    const scanned = scan.table
    if (!isTableValid(entries, scan.fileLen)) {
      add(
        "index-out-of-bounds",
        `index/turns.json has entries that overlap, are empty or end past the log's ${scan.fileLen} bytes`
      )
    }
    if (m._tag === "Present" && !isTableConsistent(entries, m.value)) {
      add(
        "index-inconsistent",
        `index/turns.json turn numbers (${entries.length > 0 ? entries.turnAt(0) : "none"}..${
          entries.length > 0 ? entries.turnAt(entries.length - 1) : "none"
        }) do not match the manifest (retained_turn_base ${
          m.value.retained_turn_base ?? 1
        }, turn_count ${m.value.turn_count}, in_turn ${m.value.in_turn ?? "absent"})`
      )
    }
    const count = Math.max(entries.length, scanned.length)
    for (let i = 0; i < count; i++) {
      if (i >= entries.length || i >= scanned.length || !sameSpan(entries, scanned, i)) {
        add(
          "index-mismatch",
          `index/turns.json entry ${i + 1} is ${describeEntry(entryOrUndefined(entries, i))} but the log gives ${
            describeEntry(entryOrUndefined(scanned, i))
          } (stored ${entries.length} entries, log ${scanned.length})`
        )
        break
      }
    }
  }
  const marker = inspection.marker
  if (marker._tag !== "Missing") {
    add(
      "pending-cap-rewrite",
      "index/pending-cap-rewrite.json is present: a cap eviction was interrupted; the next open finishes the recovery"
    )
  }
  return findings
}

/**
 * Verifies a session without writing anything: rescans the whole log (torn tail, malformed and
 * undecodable lines with their offsets) and compares the result with `manifest.json` and
 * `index/turns.json` as stored — counters, `persisted_file_len`, index validity and consistency,
 * and the index entries themselves (ignoring `ts`). An empty `findings` means clean.
 *
 * **Gotchas**: on a live session (another process holds the lock) differences may be writes in
 * flight; `inspection.live` says so.
 */
export const verifySession = Effect.fn("Verification.verifySession")(
  function*(sessionsDir: string, sessionId: string, options: Omit<InspectOptions, "forceScan"> = {}) {
    const { inspection, scan } = yield* inspectWithScan(sessionsDir, sessionId, options)
    const findings = [...(yield* derivedPathFindings(inspection.paths)), ...compareWithScan(inspection, scan)]
    return { inspection, scan, findings } satisfies VerifyReport
  }
)

/**
 * A `derived-path` finding for every derived path that is not what the store keeps there:
 * `derived/` or `index/` that is not a directory, or a metadata file that is neither a regular
 * file nor absent. Such a path never blocks recording: the next open for writing moves it aside (a
 * link is unlinked, never followed) and rebuilds it. A link at `manifest.json`, which the store
 * refuses to open through, is reported as `manifest-invalid` instead.
 */
const derivedPathFindings = (paths: SessionPaths) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const wanted: ReadonlyArray<readonly [string, string, "Directory" | "File"]> = [
      [paths.derivedDir, "derived/", "Directory"],
      [paths.indexDir, "index/", "Directory"],
      [paths.manifest, "manifest.json", "File"],
      [paths.turns, "index/turns.json", "File"],
      [paths.marker, "index/pending-cap-rewrite.json", "File"]
    ]
    const infos = yield* fs.lstatMany(wanted.map(([path]) => path)).pipe(
      Effect.catch(() => Effect.succeed(wanted.map(() => undefined)))
    )
    const findings: Array<Finding> = []
    wanted.forEach(([path, name, kind], i) => {
      const info = infos[i]
      // A link at manifest.json is `manifest-invalid` (the store refuses to open through it).
      if (info === undefined || info.type === kind || (name === "manifest.json" && info.type === "SymbolicLink")) return
      const repair = `the next open for writing ${
        info.type === "SymbolicLink" ? "unlinks it" : "moves it aside"
      } and rebuilds it`
      findings.push({
        kind: "derived-path",
        message: `${name} is a ${info.type === "SymbolicLink" ? "symbolic link" : info.type.toLowerCase()}, ` +
          `not a ${kind === "File" ? "regular file" : "directory"} (${path}); ${repair}`
      })
    })
    return findings
  })
