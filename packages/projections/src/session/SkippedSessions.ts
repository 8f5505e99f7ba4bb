/**
 * Where a store-wide reader (facts, search) reports a session it skipped because a file it reads
 * could not be read — a FIFO, a directory or a link planted at `derived/memory.json`, an I/O error
 * — so one hostile session neither stalls nor silently vanishes from the answer. The default
 * reporter drops the reports; the CLI provides one that prints a line per skipped session to stderr.
 */
import { Context, Effect } from "effect"

/** One session a store-wide reader left out, and why. */
export interface SkippedSession {
  /** The session's directory name below the sessions root. */
  readonly session: string
  /** The file that could not be read. */
  readonly path: string
  /** What went wrong (the store error's message). */
  readonly detail: string
}

/** The reporter of skipped sessions; by default reports go nowhere. */
export const SkippedSessions = Context.Reference<(skipped: SkippedSession) => Effect.Effect<void>>(
  "@logbook/projections/SkippedSessions",
  { defaultValue: () => () => Effect.void }
)

/** Reports `skipped` to the current {@link SkippedSessions} reporter. */
export const reportSkipped = (skipped: SkippedSession): Effect.Effect<void> =>
  Effect.gen(function*() {
    const report = yield* SkippedSessions
    yield* report(skipped)
  })
