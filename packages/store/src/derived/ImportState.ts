/**
 * Where an import of a foreign source stands (`derived/import.json` of the session it became,
 * docs/import.md#incremental): the source it was read from, how many bytes of it were consumed,
 * the SHA-256 of exactly those bytes, the length of `events.jsonl` after the import wrote, and the
 * mapper's state, so a source that grew imports only its new records and a source whose consumed
 * prefix changed is refused instead of being merged.
 *
 * **Gotchas**: the state is saved after the events it describes were flushed; if the process dies
 * in between, the recorded log length no longer matches and the next import refuses the session
 * rather than appending the same records twice.
 */
import { ImportFormat } from "@logbook/domain"
import { Effect, Option, Result, Schema } from "effect"
import { SessionFs } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"
import type { SessionPaths } from "../log/SessionPaths.ts"
import { CorruptFile } from "./GoalStore.ts"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** The persisted progress of one imported source. */
export const ImportState = Schema.Struct({
  version: Schema.Literal(1),
  format: ImportFormat,
  source: Schema.String,
  offset: Count,
  prefix_sha256: Schema.String,
  lines: Count,
  records: Count,
  log_length: Count,
  mapper_state: Schema.Json
})

/** The persisted progress of one imported source. */
export type ImportState = typeof ImportState.Type

const decodeState = Schema.decodeUnknownResult(Schema.fromJsonString(ImportState))

/** Where a session's import state lives. */
export const importStatePath = (paths: SessionPaths): string => paths.importState

const utf8 = new TextDecoder("utf-8")

/** Loads the import state: absent → none; unparseable → `CorruptFile` naming the file. */
export const loadImportState = (
  paths: SessionPaths
): Effect.Effect<Option.Option<ImportState>, StoreIoError | CorruptFile, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const path = importStatePath(paths)
    const bytes = yield* fs.readFileNoFollow(path)
    if (Option.isNone(bytes)) return Option.none()
    const decoded = decodeState(utf8.decode(bytes.value))
    if (Result.isFailure(decoded)) {
      return yield* new CorruptFile({ operation: "loadImportState", path, detail: decoded.failure.message })
    }
    return Option.some(decoded.success)
  })

/** Saves the import state atomically (0600), creating `derived/` privately if needed. */
export const saveImportState = (
  paths: SessionPaths,
  state: ImportState
): Effect.Effect<void, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => fs.writeAtomic(importStatePath(paths), `${JSON.stringify(state)}\n`))
