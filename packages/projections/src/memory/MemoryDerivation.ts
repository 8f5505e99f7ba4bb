/**
 * Deriving a session memory view from the log (docs/search.md#derived-memory), for sessions with
 * no host to write `derived/memory.json` (recorded by Logbook alone, or imported from another
 * tool): the goals, agent messages, plans, decisions, file changes, failures and verification
 * outcomes become grounded facts with their source (turn and byte offset), under the same fact
 * rules as the eviction summary. A host-written view is never replaced.
 */
import { addToMemoryDerivation, derivedMemoryView, emptyMemoryDerivation, parseRfc3339 } from "@logbook/domain"
import { writeDerivedMemoryView } from "@logbook/store"
import { Clock, Effect, Stream } from "effect"
import { turnedEvents } from "../session/internal/turnedEvents.ts"
import { findSession } from "../session/SessionLookup.ts"

/**
 * Folds the retained log of session `sessionId` (an id or a directory name below `sessionsDir`)
 * into a memory view and writes it, unless the host wrote its own view (`keptHostView`) or the
 * stored derived view already says the same (`written: false`). `created_at` is the session's
 * creation time from its manifest. Fails with `SessionNotFound` for an unknown session and
 * `CorruptFile` when the stored view does not parse.
 *
 * **Gotchas**: reads the whole retained log (streamed, bounded memory); a live writer's unflushed
 * events are not seen.
 */
export const deriveSessionMemory = Effect.fn("MemoryDerivation.deriveSessionMemory")(
  function*(sessionsDir: string, sessionId: string) {
    const paths = yield* findSession(sessionsDir, sessionId)
    const { events, inspection } = yield* turnedEvents(sessionsDir, sessionId)
    const acc = yield* Stream.runFold(
      events,
      () => emptyMemoryDerivation,
      (a, e) => addToMemoryDerivation(a, e.event, e.offset, e.turn?.turn_number)
    )
    const nowMs = yield* Clock.currentTimeMillis
    const manifest = inspection.effectiveManifest
    const created = parseRfc3339(manifest.created_at)?.seconds ?? Math.floor(nowMs / 1000)
    const view = derivedMemoryView(acc, { sessionId: manifest.session_id, createdAt: created, nowMs })
    return yield* writeDerivedMemoryView(paths, manifest.session_id, view)
  }
)
