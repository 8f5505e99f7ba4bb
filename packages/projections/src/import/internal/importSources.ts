/**
 * Source discovery: the files below the paths an import was given, in a stable order, through
 * the store's no-follow walk; a link or a missing path given directly is reported, never followed.
 */
import type { ImportFormat } from "@logbook/domain"
import type { StoreIoError } from "@logbook/store"
import { regularFilesBelow, SessionFs } from "@logbook/store"
import { Effect, Option, Result } from "effect"
import * as NodePath from "node:path"
import type { SourceStatus } from "../ImportReport.ts"

const extensionsOf = (format: ImportFormat | "auto"): ReadonlyArray<string> =>
  format === "gemini" || format === "codex"
    ? [".json", ".jsonl"]
    : format === "opencode"
    ? [".json", ".db"]
    : format === "auto"
    ? [".jsonl", ".json", ".db", ".vscdb", "/.aider.chat.history.md"]
    : format === "aider"
    ? ["/.aider.chat.history.md"]
    : format === "cline" || format === "roo"
    ? ["/ui_messages.json", "/api_conversation_history.json", "/task_metadata.json"]
    : format === "cursor"
    ? [".jsonl", ".vscdb"]
    : [".jsonl"]

/** The reason given to a companion file that a directory walk skips (a prefix of it). */
export const COMPANION = "companion file, not a session:"

/**
 * Files the agents keep beside their sessions, which a directory walk meets and skips on purpose
 * (named in the report, never counted as a source that gave nothing): Claude Code's
 * `subagents/agent-*.meta.json` and `<session>/tool-results/*`, Gemini CLI's `logs.json` prompt log, a Cline / Roo Code task's
 * `api_conversation_history.json` and `task_metadata.json`.
 */
const companionOf = (path: string): string | undefined => {
  const name = NodePath.basename(path)
  if (name.endsWith(".meta.json") && NodePath.basename(NodePath.dirname(path)) === "subagents") {
    return "Claude Code subagent metadata"
  }
  if (NodePath.basename(NodePath.dirname(path)) === "tool-results") {
    return "Claude Code separated tool result (read with its transcript)"
  }
  if (name === "logs.json") return "Gemini CLI prompt log"
  if (name === "api_conversation_history.json" || name === "task_metadata.json") {
    return "Cline / Roo Code task file (the task is imported from ui_messages.json)"
  }
  return undefined
}

/** A file found to import, or a given path that cannot be (with the report it gets). */
export interface Candidate {
  readonly path: string
  readonly problem?: { readonly status: SourceStatus; readonly reason: string }
  /** An OpenCode legacy `storage/` directory, imported as one store rather than file by file. */
  readonly store?: "opencode-storage"
}

/** The subdirectories of OpenCode's legacy `storage/` tree whose files make its sessions. */
const STORAGE_PARTS: ReadonlySet<string> = new Set(["session", "message", "part"])

/** The name OpenCode's data directory gives its database (a storage tree beside it was migrated into it). */
export const OPENCODE_DB = "opencode.db"

/** The files below the given paths, in a stable order; links are reported, never followed. */
export const collectSources = (paths: ReadonlyArray<string>, format: ImportFormat | "auto") =>
  Effect.gen(function*() {
    const fs = yield* SessionFs
    const out: Array<Candidate> = []
    const exts = extensionsOf(format)
    const stores = new Set<string>()
    const opencode = format === "opencode" || format === "auto"
    const walk = (dir: string): Effect.Effect<void, StoreIoError> =>
      Effect.map(
        regularFilesBelow(fs, dir, (relative, name, type) => {
          if (type === "Directory") {
            // `…/storage/{session,message,part}`: the tree is one source, its files are not walked.
            const parent = NodePath.dirname(NodePath.join(dir, relative))
            if (opencode && STORAGE_PARTS.has(name) && NodePath.basename(parent) === "storage") {
              stores.add(parent)
              return false
            }
            return true
          }
          return exts.some((ext) => `/${name}`.endsWith(ext))
        }),
        (files) => {
          for (const file of files) {
            const companion = companionOf(file.path)
            out.push(
              companion === undefined ? { path: file.path } : {
                path: file.path,
                problem: { status: "ignored", reason: `${COMPANION} ${companion}` }
              }
            )
          }
        }
      )
    for (const given of paths) {
      const path = NodePath.resolve(given)
      const info = yield* Effect.result(fs.lstat(path))
      if (Result.isFailure(info)) {
        out.push({ path, problem: { status: "failed", reason: info.failure.message } })
      } else if (Option.isNone(info.success)) {
        out.push({ path, problem: { status: "failed", reason: "no such file or directory" } })
      } else if (info.success.value.type === "SymbolicLink") {
        out.push({ path, problem: { status: "refused", reason: "a symbolic link (links are never followed)" } })
      } else if (info.success.value.type === "Directory") {
        const walked = yield* Effect.result(walk(path))
        if (Result.isFailure(walked)) out.push({ path, problem: { status: "failed", reason: walked.failure.message } })
        for (const store of stores) {
          const db = yield* Effect.option(fs.lstat(NodePath.join(NodePath.dirname(store), OPENCODE_DB)))
          const migrated = Option.isSome(db) && Option.isSome(db.value) && db.value.value.type === "File"
          out.push(
            migrated
              ? {
                path: store,
                problem: {
                  status: "ignored",
                  reason: `${COMPANION} OpenCode's legacy storage/, migrated into the ${OPENCODE_DB} beside it ` +
                    "(which is imported)"
                }
              }
              : { path: store, store: "opencode-storage" }
          )
        }
        stores.clear()
      } else {
        out.push({ path })
      }
    }
    return out
  })
