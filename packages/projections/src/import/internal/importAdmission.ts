/**
 * The admission check: may this source be imported into its session now? A new session must be
 * empty; an imported one must come from the same format, its log must be as the last import left
 * it, and its saved mapper state must decode.
 */
import type { ImportFormat, ImportIdentity } from "@logbook/domain"
import { loadImportState, SessionFs, sessionPaths } from "@logbook/store"
import { Effect, Option, Result } from "effect"
import type { SourceStatus } from "../ImportReport.ts"
import type { AnyMapper } from "./formatRegistry.ts"

/** Why a source is not imported now: its report status and the reason shown. */
export type Refusal = { readonly status: SourceStatus; readonly reason: string }

/**
 * Loads a session's import state and decides whether importing into it may go on: a new session
 * must be empty; an imported one must come from the same format, its log must be as the last
 * import left it, and its saved mapper state must decode.
 */
export const prepare = (sessionsDir: string, identity: ImportIdentity, format: ImportFormat, mapper: AnyMapper) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const paths = sessionPaths(sessionsDir, identity.sessionId)
    const refuse = (status: SourceStatus, reason: string) => ({ paths, refusal: { status, reason } })
    const previous = yield* loadImportState(paths)
    const logInfo = yield* fs.lstat(paths.events)
    const logLength = Option.isSome(logInfo) ? logInfo.value.size : 0
    if (Option.isNone(previous)) {
      if (logLength > 0) {
        return refuse(
          "refused",
          `session ${identity.sessionId} already exists and was not imported from a source; ` +
            "import into another --sessions-dir or remove that session first"
        )
      }
      return { paths, previous, run: mapper.start(identity) }
    }
    const state = previous.value
    if (state.format !== format) return refuse("refused", `session was imported from a ${state.format} source`)
    if (state.log_length !== logLength) {
      return refuse(
        "refused",
        `events.jsonl changed since the last import (${logLength} bytes, recorded ${state.log_length}); ` +
          "remove the session to import it again"
      )
    }
    const resumed = mapper.resume(state.mapper_state)
    if (Result.isFailure(resumed)) return refuse("failed", `unreadable import state: ${resumed.failure.message}`)
    return { paths, previous, run: resumed.success }
  })
