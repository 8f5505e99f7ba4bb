/**
 * Reading grounded facts out of session memory views (docs/search.md#facts): one session's facts
 * (`session_memory_facts`) and every session's facts in a deterministic order (`query_facts`).
 * Reads never follow links; sessions are found only as direct children of the sessions root.
 * Facts come out redacted (docs/security.md): a host may have written its view with secrets in it.
 */
import { readMemoryFactsText, redactSecrets } from "@logbook/domain"
import { absolutePath, CorruptFile, memoryViewPath, pathsForDir, SessionFs, sessionPaths } from "@logbook/store"
import { Effect, Option, Result } from "effect"
import * as NodePath from "node:path"
import { reportSkipped } from "../session/SkippedSessions.ts"

/** One fact and the session (directory name) it belongs to. */
export interface FactRecord {
  readonly fact: string
  readonly session_id: string
}

const utf8 = new TextDecoder("utf-8")

/**
 * The facts of one session's `derived/memory.json`: each `grounded_facts[i].fact` that is a
 * non-empty string after trimming, in array order, at most `limit`. A missing view (or session)
 * is no facts; an unparseable one fails with `CorruptFile` naming the file.
 */
export const sessionMemoryFacts = Effect.fn("MemoryFacts.sessionMemoryFacts")(
  function*(sessionsDir: string, sessionId: string, limit: number) {
    const fs = yield* SessionFs
    const paths = sessionPaths(sessionsDir, sessionId)
    const path = memoryViewPath(paths)
    const bytes = yield* fs.readFileNoFollow(path)
    if (Option.isNone(bytes)) return []
    const read = readMemoryFactsText(utf8.decode(bytes.value))
    if (Result.isFailure(read)) {
      return yield* new CorruptFile({ operation: "sessionMemoryFacts", path, detail: read.failure.message })
    }
    const name = NodePath.basename(paths.dir)
    const out: Array<FactRecord> = []
    for (const fact of read.success.facts) {
      if (out.length >= limit) break
      if (fact !== undefined && fact.trim().length > 0) out.push({ fact: redactSecrets(fact), session_id: name })
    }
    return out
  }
)

/** Options of {@link queryFacts}. */
export interface QueryFactsOptions {
  /** Only this session (id or directory name). */
  readonly session?: string | undefined
}

/**
 * Every session's facts (each string `grounded_facts[i].fact`), sessions in directory-name order,
 * facts in array order, at most `limit`. Sessions without a parseable view are skipped (one whose
 * view cannot be read — a FIFO or a link planted there, an I/O error — is reported to
 * `SkippedSessions`); entries
 * that are not real directories, and names starting with `.`, are ignored. A missing root is empty.
 */
export const queryFacts = Effect.fn("MemoryFacts.queryFacts")(
  function*(sessionsDir: string, limit: number, options: QueryFactsOptions = {}) {
    const fs = yield* SessionFs
    const root = absolutePath(sessionsDir)
    if (Option.isNone(yield* fs.lstat(root))) return []
    const names = options.session === undefined
      ? yield* fs.listDir(root)
      : [NodePath.basename(sessionPaths(root, options.session).dir)]
    const out: Array<FactRecord> = []
    for (const name of [...names].sort()) {
      if (out.length >= limit) break
      if (name.startsWith(".")) continue
      const paths = pathsForDir(root, name)
      const info = yield* fs.lstat(paths.dir)
      if (Option.isNone(info) || info.value.type !== "Directory") continue
      const viewPath = memoryViewPath(paths)
      const bytes = yield* fs.readFileNoFollow(viewPath).pipe(
        Effect.catch((error) =>
          Effect.as(reportSkipped({ session: name, path: viewPath, detail: error.message }), Option.none<Uint8Array>())
        )
      )
      if (Option.isNone(bytes)) continue
      const read = readMemoryFactsText(utf8.decode(bytes.value))
      if (Result.isFailure(read)) continue
      for (const fact of read.success.facts) {
        if (out.length >= limit) break
        if (fact !== undefined) out.push({ fact: redactSecrets(fact), session_id: name })
      }
    }
    return out
  }
)
