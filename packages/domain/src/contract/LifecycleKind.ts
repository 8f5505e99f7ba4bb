/**
 * The lifecycle classification of one accepted event record (docs/log.md#lifecycle). Both the append
 * path and the scan path reduce to this small set before the turn state machine runs, so
 * the two paths can never disagree about what opens or closes a turn.
 */

/**
 * What an accepted record means for the turn lifecycle: only `turn.started` opens a turn,
 * only `turn.completed` / `turn.failed` close one, only `thread.completed` makes a session
 * terminal; everything else (`other`) is attributed to the open turn, if any.
 */
export type LifecycleKind =
  | "thread_started"
  | "thread_completed"
  | "turn_started"
  | "turn_completed"
  | "turn_failed"
  | "other"

/** Maps an event `type` string to its lifecycle kind (unknown and item types are `other`). */
export const lifecycleKindOf = (type: string): LifecycleKind => {
  switch (type) {
    case "thread.started":
      return "thread_started"
    case "thread.completed":
      return "thread_completed"
    case "turn.started":
      return "turn_started"
    case "turn.completed":
      return "turn_completed"
    case "turn.failed":
      return "turn_failed"
    default:
      return "other"
  }
}
