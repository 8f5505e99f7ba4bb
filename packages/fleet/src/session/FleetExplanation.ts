/**
 * The explanation of a replicated session (docs/explain.md), computed as the local read side
 * computes it from `events.jsonl`: one pass over the latest epoch's lines in offset order, each
 * folded with domain's explanation reducer and dropped, a running SHA-256 over the bytes giving
 * the model's `revision`. So a fleet session and the directory it was replicated from explain
 * alike, byte for byte. Read-only.
 */
import type { ExplanationModel, ExplanationScope } from "@logbook/domain"
import { makeExplanationFold } from "@logbook/domain"
import { explanationRecordOf } from "@logbook/projections"
import { Effect, Stream } from "effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import type { FleetError, FleetTarget } from "../db/FleetDatabase.ts"
import type { FleetSessionNotFound } from "../db/FleetSessionData.ts"
import { fleetLogLines } from "../db/FleetSessionData.ts"
import { inspectFleetSession } from "./FleetSessions.ts"

const isBlank = (bytes: Uint8Array): boolean => {
  for (const b of bytes) if (b !== 10 && b !== 13 && b !== 32 && b !== 9) return false
  return true
}

/**
 * The explanation of a fleet session's retained log (or of its latest task), as
 * `queryExplanation` gives it for the session's directory. Memory holds one page of lines and
 * the fold, whatever the log's size.
 */
export const explainFleetSession = (
  target: FleetTarget,
  session: string,
  scope: ExplanationScope = "task"
): Effect.Effect<ExplanationModel, FleetError | FleetSessionNotFound, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const view = yield* inspectFleetSession(target, session)
    const manifest = view.inspection.effectiveManifest
    const fold = makeExplanationFold(manifest.session_id)
    const hash = createHash("sha256")
    yield* fleetLogLines(target, "fleet.explain", view.row.sessionId, view.row.epoch).pipe(
      Stream.runForEach((line) =>
        Effect.sync(() => {
          hash.update(line.bytes)
          if (!isBlank(line.bytes)) fold.add(explanationRecordOf(line))
        })
      )
    )
    const evictedTurns = Math.max(0, (manifest.retained_turn_base ?? 1) - 1)
    return fold.model({ scope, revision: hash.digest("hex"), evictedTurns })
  })
