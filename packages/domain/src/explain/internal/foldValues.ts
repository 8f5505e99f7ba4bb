/**
 * The value mappings of the explanation fold: how a recorded prompt, plan text, usage counters
 * and statuses become the labels, totals and statuses of the model. Pure functions of recorded
 * values, kept apart so the fold reads as the order in which records change its state.
 *
 * **Gotchas**: a tool invocation's `outcome` wins over its `status` (an `error` outcome on a
 * `completed` invocation is a failure); a delegation's status is free text, matched by substring.
 */
import type { ExecutionStatus, ToolOutcome } from "../../contract/ThreadItem.ts"
import type { UsageTotals } from "../../contract/Usage.ts"
import type { Json } from "./eventAccess.ts"

/**
 * IDE-context preambles some agents prepend to the user's prompt (Codex's "# Context from my
 * IDE setup: … ## My request for Codex:"): the goal is the request after the marker, not the
 * list of open tabs before it. A prompt without the marker is returned unchanged.
 */
const REQUEST_MARKER = /^\s*#\s*Context from my IDE setup:[\s\S]*?##\s*My request for Codex:\s*/u

/** The user's request in a prompt: what follows an IDE-context preamble's marker, or the whole prompt. */
export const requestText = (prompt: string): string => {
  const match = REQUEST_MARKER.exec(prompt)
  if (match === null) return prompt
  const rest = prompt.slice(match[0].length).replace(/\s+/gu, " ").trim()
  return rest.length === 0 ? prompt : rest
}

/** The first line of a text, trimmed (a plan's label). */
export const firstLine = (text: string): string => {
  const trimmed = text.trim()
  const nl = trimmed.indexOf("\n")
  return nl === -1 ? trimmed : trimmed.slice(0, nl)
}

/** Adds a turn's recorded usage to a total (non-numeric counters count as 0; no usage leaves the total). */
export const addUsage = (a: UsageTotals | undefined, u: Json | undefined): UsageTotals | undefined => {
  if (u === undefined) return a
  const n = (k: string) => {
    const v = u[k]
    return typeof v === "number" && Number.isFinite(v) ? v : 0
  }
  const base = a ?? { input_tokens: 0, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 0 }
  return {
    input_tokens: base.input_tokens + n("input_tokens"),
    cached_input_tokens: base.cached_input_tokens + n("cached_input_tokens"),
    cache_creation_tokens: base.cache_creation_tokens + n("cache_creation_tokens"),
    output_tokens: base.output_tokens + n("output_tokens")
  }
}

/** The status shown for an `ExecutionStatus`. */
export const execStatus = (s: ExecutionStatus): string => s === "in_progress" ? "in progress" : s

/** The status shown for a tool invocation: its outcome when that is finer than its status. */
export const toolStatus = (s: ExecutionStatus, outcome: ToolOutcome | undefined): string => {
  switch (outcome) {
    case "error":
    case "invalid_tool":
      return "failed"
    case "permission_rejected":
    case "hook_denied":
      return "denied"
    case "cancelled":
    case "permission_cancelled":
      return "cancelled"
    default:
      return execStatus(s)
  }
}

/** The status shown for a delegated agent's free-text status. */
export const delegationStatus = (status: string): string => {
  const lower = status.toLowerCase()
  return lower.includes("fail") || lower.includes("error")
    ? "failed"
    : lower.includes("cancel")
    ? "cancelled"
    : lower.includes("complete") || lower === "succeeded" || lower === "success" || lower === "done"
    ? "completed"
    : "in progress"
}
