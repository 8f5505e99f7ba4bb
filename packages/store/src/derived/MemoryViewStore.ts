/**
 * Persistence of the session memory view, `derived/memory.json` (docs/search.md#memory-view):
 * the host's live write (atomic, private, nothing written when the stored view is
 * content-equivalent) and the derived write that never replaces a host-written view. Reads never
 * follow links. The view never reads or writes `events.jsonl`.
 */
import type { SessionMemoryView } from "@logbook/domain"
import { decodeMemoryViewText, encodeMemoryView, planMemoryViewWrite, readMemoryFactsText } from "@logbook/domain"
import { Clock, Effect, Option, Result } from "effect"
import * as NodePath from "node:path"
import { SessionFs } from "../fs/SessionFs.ts"
import type { CreateDirError } from "../fs/StoreError.ts"
import { StoreIoError } from "../fs/StoreError.ts"
import type { SessionPaths } from "../log/SessionPaths.ts"
import { sessionPaths } from "../log/SessionPaths.ts"
import { CorruptFile } from "./GoalStore.ts"

/** Where a session's memory view lives. */
export const memoryViewPath = (paths: SessionPaths): string => NodePath.join(paths.derivedDir, "memory.json")

const utf8 = new TextDecoder("utf-8")

/** What is stored at `derived/memory.json`. */
export type StoredMemoryView =
  | { readonly _tag: "Missing" }
  /** A complete view (decodes with the full schema). */
  | { readonly _tag: "View"; readonly view: SessionMemoryView; readonly derived: boolean }
  /** JSON with grounded facts that lacks other envelope fields (a legacy or partial host view). */
  | { readonly _tag: "Partial"; readonly derived: boolean }
  | { readonly _tag: "Corrupt"; readonly detail: string }

/** Reads and classifies the stored view (no-follow read). */
export const readStoredMemoryView = (
  paths: SessionPaths
): Effect.Effect<StoredMemoryView, StoreIoError, SessionFs> =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const bytes = yield* fs.readFileNoFollow(memoryViewPath(paths))
    if (Option.isNone(bytes)) return { _tag: "Missing" }
    const text = utf8.decode(bytes.value)
    const full = decodeMemoryViewText(text)
    if (Result.isSuccess(full)) return { _tag: "View", view: full.success, derived: full.success.origin === "derived" }
    const lenient = readMemoryFactsText(text)
    if (Result.isSuccess(lenient)) return { _tag: "Partial", derived: lenient.success.derived }
    return { _tag: "Corrupt", detail: lenient.failure.message }
  })

/** The outcome of a write: the file path and whether bytes were written (false: equivalent, or a host view kept). */
export interface MemoryViewWriteResult {
  readonly path: string
  readonly written: boolean
  /** Set when a derived write was skipped because the host wrote its own view. */
  readonly keptHostView: boolean
}

const refuseSymlinkedSession = (paths: SessionPaths) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const info = yield* fs.lstat(paths.dir)
    if (Option.isSome(info) && info.value.type !== "Directory") {
      return yield* new StoreIoError({
        operation: "writeMemoryView",
        path: paths.dir,
        code: info.value.type === "SymbolicLink" ? "ELOOP" : "ENOTDIR",
        detail: "the session entry is not a real directory; memory views are only written into real session directories"
      })
    }
  })

const writePlanned = (
  paths: SessionPaths,
  existing: SessionMemoryView | undefined,
  view: SessionMemoryView,
  id: string
) =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const path = memoryViewPath(paths)
    const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
    const plan = planMemoryViewWrite(existing, view, id, now)
    if (plan.view === undefined) return { path, written: false, keptHostView: false } satisfies MemoryViewWriteResult
    yield* fs.ensurePrivateDir(paths.derivedDir)
    yield* fs.writeAtomic(path, encodeMemoryView(plan.view))
    return { path, written: true, keptHostView: false } satisfies MemoryViewWriteResult
  })

/**
 * The host's write of its session memory view (`write_session_memory_view`): the session
 * directory is `sessionsDir/<sanitised id>` and must not be a symlink; `derived/` is ensured
 * 0700; `session_id` is set to the raw id, `schema_version` to 3 when absent, `created_at` is
 * kept from the stored view, `updated_at` is now; a content-equivalent stored view means nothing
 * is written. Any stored content (also a partial or corrupt one) is replaced otherwise.
 *
 * **Gotchas**: the write is atomic (temporary sibling, fsync, rename, directory fsync).
 */
export const writeMemoryView = Effect.fn("MemoryViewStore.write")(
  function*(sessionsDir: string, sessionId: string, view: SessionMemoryView) {
    const paths = sessionPaths(sessionsDir, sessionId)
    yield* refuseSymlinkedSession(paths)
    const stored = yield* readStoredMemoryView(paths)
    return yield* writePlanned(paths, stored._tag === "View" ? stored.view : undefined, view, sessionId)
  }
)

/**
 * Writes a view derived from the log into the session directory `paths`, unless the host wrote
 * its own: a stored view without `origin: "derived"` is kept (`keptHostView`), a stored derived
 * view is replaced when its content changed, a corrupt file fails with `CorruptFile` (it might be
 * the host's; move it aside to derive again).
 */
export const writeDerivedMemoryView = (
  paths: SessionPaths,
  sessionId: string,
  view: SessionMemoryView
): Effect.Effect<MemoryViewWriteResult, StoreIoError | CreateDirError | CorruptFile, SessionFs> =>
  Effect.gen(function*() {
    yield* refuseSymlinkedSession(paths)
    const stored = yield* readStoredMemoryView(paths)
    const path = memoryViewPath(paths)
    switch (stored._tag) {
      case "Corrupt":
        return yield* new CorruptFile({ operation: "deriveMemory", path, detail: stored.detail })
      case "Partial":
        if (!stored.derived) return { path, written: false, keptHostView: true }
        return yield* writePlanned(paths, undefined, view, sessionId)
      case "View":
        if (!stored.derived) return { path, written: false, keptHostView: true }
        return yield* writePlanned(paths, stored.view, view, sessionId)
      case "Missing":
        return yield* writePlanned(paths, undefined, view, sessionId)
    }
  })
