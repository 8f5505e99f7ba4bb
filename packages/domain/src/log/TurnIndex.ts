/**
 * The one meaning of a session's stored metadata: whether the manifest, the turn index and the
 * cap-rewrite marker may be trusted for a log of a given length, the turn base a rescan must
 * start numbering from, and where turn `n` is. `EventLog.open`, its rescan, turn reconstruction
 * and the read-only inspector all decide through these functions, so the writer and every reader
 * agree on what a directory means. A wrong answer here either costs an O(file) rescan (too
 * strict) or pairs an index with bytes it does not describe (too lenient), so the rules follow
 * the reference closely and every deviation is named.
 */
import type { Manifest, PendingCapRewrite, TurnEntry } from "./SessionFiles.ts"

/**
 * Whether the entries can describe a log of `fileLen` bytes: each has `event_count > 0`,
 * `start_offset ≤ end_offset ≤ fileLen`, and starts at or after the previous entry's end
 * (the first at or after 0). An empty index is valid.
 */
export const isIndexValid = (entries: ReadonlyArray<TurnEntry>, fileLen: number): boolean => {
  let previousEnd = 0
  for (const entry of entries) {
    if (entry.event_count <= 0) return false
    if (entry.start_offset < previousEnd) return false
    if (entry.start_offset > entry.end_offset) return false
    if (entry.end_offset > fileLen) return false
    previousEnd = entry.end_offset
  }
  return true
}

/**
 * Whether the entries agree with the manifest's counters: turn numbers rise by exactly 1, the
 * first is the first retained turn (`max(retained_turn_base ?? 1, 1)`) and the last is
 * `turn_count`, plus one while a turn is open. An empty index is consistent when no turn was
 * ever numbered (`turn_count` 0, not in a turn) or every closed turn has been evicted
 * (`retained_turn_base > turn_count`, not in a turn).
 *
 * **Gotchas**: deviation from the reference — an empty index with `in_turn: true` is
 * inconsistent here (the open turn is never evicted, so its entry must exist); the reference
 * accepted it when `retained_turn_base > turn_count`, leaving the open turn without an entry.
 */
export const isIndexConsistent = (entries: ReadonlyArray<TurnEntry>, manifest: Manifest): boolean => {
  const inTurn = manifest.in_turn === true
  const expectedLast = manifest.turn_count + (inTurn ? 1 : 0)
  const expectedFirst = Math.max(manifest.retained_turn_base ?? 1, 1)
  const first = entries[0]
  const last = entries.at(-1)
  if (first === undefined || last === undefined) {
    if (inTurn) return false
    return expectedLast === 0 || expectedFirst > manifest.turn_count
  }
  if (first.turn_number !== expectedFirst || last.turn_number !== expectedLast) return false
  let previous = first.turn_number - 1
  for (const entry of entries) {
    if (entry.turn_number !== previous + 1) return false
    previous = entry.turn_number
  }
  return true
}

/**
 * The number the first turn found by a rescan gets (always ≥ 1); first applicable rule wins:
 *
 * 1. a marker matching the file (`marker`; pass it only when `new_file_len == fileLen` and
 *    `new_file_len < previous_file_len`) → its `retained_turn_base`;
 * 2. "rewritten without a marker": the manifest's `persisted_file_len` P exceeds `fileLen` and
 *    the index is valid for P. The rewrite removed a prefix and may have put a checkpoint
 *    prefix of C bytes in front, so the real cut is `P − fileLen + C`. `checkpointRunBytes` (R)
 *    is the length of the leading run of checkpoint records of the current file (`matrix.updated`
 *    and `thread.completed` lines, see `isCheckpointRecord`): C ≤ R, and those lines lie before
 *    the first retained turn, so the first entry with
 *    `start_offset ≥ P − fileLen + R` is exactly the first retained turn → its number; if none
 *    and `P − fileLen + R ≥ P` (nothing but checkpoints left) → `turn_count + 1`. With R = 0
 *    this is the reference rule, which can be off when checkpoints were re-inserted;
 * 3. the manifest's `retained_turn_base`;
 * 4. legacy: an index valid for `fileLen` and non-empty → its first turn number;
 * 5. 1.
 *
 * **Gotchas**: a too-small R (0 when unknown) can only make rule 2 pick an evicted turn, i.e.
 * reuse numbers the reference would have reused too; a too-large R can skip a retained turn —
 * so pass `LogScan.checkpointRun` of a scan of exactly this file, nothing longer.
 */
export const inferTurnBase = (
  manifest: Manifest | undefined,
  entries: ReadonlyArray<TurnEntry> | undefined,
  marker: PendingCapRewrite | undefined,
  fileLen: number,
  checkpointRunBytes = 0
): number => {
  if (marker !== undefined) return Math.max(marker.retained_turn_base, 1)
  if (manifest !== undefined) {
    const persisted = manifest.persisted_file_len
    if (persisted !== undefined && persisted > fileLen && entries !== undefined && isIndexValid(entries, persisted)) {
      const cut = persisted - fileLen + Math.max(checkpointRunBytes, 0)
      const firstRetained = entries.find((entry) => entry.start_offset >= cut && entry.end_offset <= persisted)
      if (firstRetained !== undefined) return Math.max(firstRetained.turn_number, 1)
      if (cut >= persisted) return manifest.turn_count + 1
    }
    if (manifest.retained_turn_base !== undefined) return Math.max(manifest.retained_turn_base, 1)
  }
  if (entries !== undefined && entries.length > 0 && isIndexValid(entries, fileLen)) {
    return Math.max(entries[0]?.turn_number ?? 1, 1)
  }
  return 1
}

/**
 * The cap-rewrite marker when it describes a log of `fileLen` bytes (`new_file_len == fileLen`
 * and the rewrite really shrank the file), else undefined: only a matching marker numbers a
 * rescan; any other marker is stale and merely removed by the next open.
 */
export const matchingMarker = (
  marker: PendingCapRewrite | undefined,
  fileLen: number
): PendingCapRewrite | undefined =>
  marker !== undefined && marker.new_file_len === fileLen && marker.new_file_len < marker.previous_file_len
    ? marker
    : undefined

/**
 * The manifest-level conditions of the open fast path: no matching marker, `in_turn` recorded
 * and `persisted_file_len` equal to the file's length. The index conditions are
 * {@link isStoredMetadataTrusted}'s; the writer checks them lazily, when the index is first needed.
 */
export const isManifestTrusted = (
  manifest: Manifest,
  marker: PendingCapRewrite | undefined,
  fileLen: number
): boolean =>
  matchingMarker(marker, fileLen) === undefined && manifest.in_turn !== undefined &&
  manifest.persisted_file_len === fileLen

/**
 * Whether the stored manifest and index describe a log of `fileLen` bytes exactly, so that no
 * rescan is needed: the manifest is trusted ({@link isManifestTrusted}), and the index is valid
 * for the file and consistent with the manifest.
 *
 * **Gotchas**: `fileLen` is the length after the open's torn-tail repair (see `repairedLength`).
 */
export const isStoredMetadataTrusted = (
  manifest: Manifest | undefined,
  entries: ReadonlyArray<TurnEntry> | undefined,
  marker: PendingCapRewrite | undefined,
  fileLen: number
): boolean =>
  manifest !== undefined && entries !== undefined && isManifestTrusted(manifest, marker, fileLen) &&
  isIndexValid(entries, fileLen) && isIndexConsistent(entries, manifest)

/**
 * The length a log has once it is opened: a non-empty file whose last byte is not `\n` gets one
 * appended (a torn tail is terminated so the next record never glues onto it).
 */
export const repairedLength = (fileLen: number, endsWithNewline: boolean): number =>
  fileLen > 0 && !endsWithNewline ? fileLen + 1 : fileLen

/** Where turn `n` is: its index entry, evicted by a cap rewrite, or never recorded. */
export type TurnLocation =
  | { readonly _tag: "Found"; readonly entry: TurnEntry }
  | { readonly _tag: "Evicted"; readonly retainedTurnBase: number }
  | { readonly _tag: "NeverExisted" }

/**
 * Locates turn `turn` among the retained entries (an open turn's entry last). A positive
 * integer below the first retained turn (`max(retainedTurnBase, 1)`) was evicted; any other
 * number the entries lack was never recorded.
 */
export const locateTurn = (
  entries: ReadonlyArray<TurnEntry>,
  retainedTurnBase: number,
  turn: number
): TurnLocation => {
  const base = Math.max(retainedTurnBase, 1)
  // Turn numbers rise by one from the base, so the entry is usually at `turn - first`.
  const first = entries[0]?.turn_number ?? base
  const guess = entries[turn - first]
  const entry = guess?.turn_number === turn ? guess : entries.find((e) => e.turn_number === turn)
  if (entry !== undefined) return { _tag: "Found", entry }
  if (Number.isInteger(turn) && turn >= 1 && turn < base) return { _tag: "Evicted", retainedTurnBase: base }
  return { _tag: "NeverExisted" }
}
