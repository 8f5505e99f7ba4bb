/**
 * Field access over an event's parsed JSON, for the explanation fold: each accessor checks only
 * the field it reads and returns {@link Bad} when that field has the wrong shape. The fold reads
 * every field of a record through these before it changes anything, so a record whose used
 * fields are wrong is counted as malformed without an exception and without a full Schema
 * decode per line (which is what keeps an explanation close to the cost of a rescan).
 *
 * **Gotchas**: every optional accessor reads an absent key and `null` alike (as the contract's
 * `omittedWhenAbsent` fields do); the literal lists come from the contract's Schemas, so a
 * value the contract accepts is never a bad field here.
 */
import { InputOrigin } from "../../contract/ThreadEvent.ts"
import {
  CommandActivity,
  ExecutionStatus,
  FileChangeItem,
  McpToolCallStatus,
  ToolOutcome
} from "../../contract/ThreadItem.ts"
import { isJsonObject } from "../../internal/jsonText.ts"

/** A JSON object as parsed. */
export type Json = { readonly [key: string]: unknown }

/** What an accessor returns when the field it reads has the wrong shape (the record is malformed). */
export const Bad: unique symbol = Symbol("logbook/explain/Bad")

/** The type of {@link Bad}. */
export type Bad = typeof Bad

/** `ExecutionStatus` of commands, tool invocations and tool outputs, from the contract. */
export const EXEC_STATUS = ExecutionStatus.literals

/** `ToolOutcome` of tool invocations, from the contract. */
export const TOOL_OUTCOMES = ToolOutcome.literals

/** `FileChangeItem.status`, from the contract. */
export const FILE_CHANGE_STATUS = FileChangeItem.fields.status.literals

/** `McpToolCallItem.status`, from the contract. */
export const MCP_STATUS = McpToolCallStatus.literals

/** A string field, or `undefined` when it is anything else (never bad). */
export const str = (o: Json, key: string): string | undefined => {
  const v = o[key]
  return typeof v === "string" ? v : undefined
}

/** A required string field. */
export const reqStr = (o: Json, key: string): string | Bad => {
  const v = o[key]
  return typeof v === "string" ? v : Bad
}

/** An optional string field. */
export const optStr = (o: Json, key: string): string | undefined | Bad => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  return typeof v === "string" ? v : Bad
}

/** An optional integer field. */
export const optInt = (o: Json, key: string): number | undefined | Bad => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  return typeof v === "number" && Number.isInteger(v) ? v : Bad
}

/** An optional object field. */
export const optObj = (o: Json, key: string): Json | undefined | Bad => {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  return isJsonObject(v) ? v : Bad
}

/** A required field that must be one of `values`. */
export const oneOf = <A extends string>(o: Json, key: string, values: ReadonlyArray<A>): A | Bad => {
  const v = o[key]
  const found = values.find((x) => x === v)
  return found === undefined ? Bad : found
}

/** An optional field that must be one of `values` when present. */
export const optOneOf = <A extends string>(o: Json, key: string, values: ReadonlyArray<A>): A | undefined | Bad =>
  o[key] === undefined || o[key] === null ? undefined : oneOf(o, key, values)

/** Argument keys whose value says what a tool call acted on (a file, a command, a search). */
const TOOL_SUBJECT_KEYS = ["file_path", "path", "notebook_path", "command", "pattern", "query", "url"] as const

/**
 * A tool call's label: its name, followed by the first subject argument that is a non-empty
 * string ("Read src/a.ts" rather than "Read"), so a list of tool calls says what each touched.
 */
export const toolLabel = (name: string, item: Json): string => {
  const args = item["arguments"]
  if (!isJsonObject(args)) return name
  for (const key of TOOL_SUBJECT_KEYS) {
    const v = args[key]
    if (typeof v === "string" && v.trim().length > 0) return `${name} ${v.trim()}`
  }
  return name
}

/** The recorded context of an item (`ItemContext`) or of a turn (`ExecutionContext`). */
export interface Context {
  readonly task: string
  readonly turn: string
  readonly actor: string
  readonly parent: string | undefined
  readonly timestamp: string
  /** Read on items only. */
  readonly activity: CommandActivity | undefined
  /** Read on `turn.started` only. */
  readonly origin?: InputOrigin | undefined
  /** Read on `turn.started` only. */
  readonly goal?: string | undefined
}

/**
 * The `context` of an item (`withOrigin` false: `activity` is read) or of `turn.started`
 * (`withOrigin` true: `origin` and `goal` are read); `undefined` for a legacy record without one.
 */
export const contextOf = (o: Json, withOrigin: boolean): Context | undefined | Bad => {
  const c = optObj(o, "context")
  if (c === undefined || c === Bad) return c
  const task = reqStr(c, "task_id")
  const turn = reqStr(c, "turn_id")
  const actor = reqStr(c, "actor_id")
  const parent = optStr(c, "parent_actor_id")
  const timestamp = reqStr(c, "timestamp")
  if (task === Bad || turn === Bad || actor === Bad || parent === Bad || timestamp === Bad) return Bad
  if (!withOrigin) {
    const activity = optOneOf(c, "activity", CommandActivity.literals)
    return activity === Bad ? Bad : { task, turn, actor, parent, timestamp, activity }
  }
  const origin = oneOf(c, "origin", InputOrigin.literals)
  const goal = optStr(c, "goal")
  if (origin === Bad || goal === Bad) return Bad
  return { task, turn, actor, parent, timestamp, activity: undefined, origin, goal }
}
