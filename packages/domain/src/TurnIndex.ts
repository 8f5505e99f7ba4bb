/**
 * Checks that decide whether persisted metadata can be trusted without reading the log, and
 * the turn base a rescan must start numbering from (docs/log.md#index-validity). A wrong answer here either
 * costs an O(file) rescan (too strict) or pairs an index with bytes it does not describe (too
 * lenient), so the rules follow the reference closely and every deviation is named.
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
 *    is the length of the leading run of `matrix.updated` lines of the current file: C ≤ R, and
 *    those lines lie before the first retained turn, so the first entry with
 *    `start_offset ≥ P − fileLen + R` is exactly the first retained turn → its number; if none
 *    and `P − fileLen + R ≥ P` (nothing but checkpoints left) → `turn_count + 1`. With R = 0
 *    this is the reference rule (docs/differences.md#turn-base notes it can be off when checkpoints were
 *    re-inserted);
 * 3. the manifest's `retained_turn_base`;
 * 4. legacy: an index valid for `fileLen` and non-empty → its first turn number;
 * 5. 1.
 *
 * **Gotchas**: a too-small R (0 when unknown) can only make rule 2 pick an evicted turn, i.e.
 * reuse numbers the reference would have reused too; a too-large R can skip a retained turn —
 * so pass the measured run of `matrix.updated` lines, nothing longer.
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
