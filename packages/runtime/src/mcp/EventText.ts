/**
 * How `read_turn` shows one event to an agent: its type and one compact text, written for a
 * reader with a token budget. Messages and reasoning as they are; a command with its exit code,
 * status and output tail; an edit as its paths and a diff excerpt; a tool call as its tool and
 * subject (`Read src/a.ts`), status and arguments; a tool's output with its exit code; a turn's
 * start with its origin and goal, its end with its token usage. The item and turn `context`
 * (task, turn and actor ids, timestamps) is left out: it repeats on every line of a turn, and on
 * imported sessions it was most of every tool call's text. Works on the display JSON of an event,
 * already redacted.
 */
import { toolLabel } from "@logbook/domain"
import { trimText } from "./Budget.ts"

type JsonRecord = Readonly<Record<string, unknown>>

const isRecord = (u: unknown): u is JsonRecord => typeof u === "object" && u !== null && !Array.isArray(u)

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const num = (u: unknown): number | undefined => (typeof u === "number" ? u : undefined)

/** What a short line says of a command's or a tool output's exit code. */
const exitText = (code: unknown): string => (typeof code === "number" ? `exit ${code}` : "no exit code")

/** A value as compact JSON, cut at `limit` characters. */
const json = (value: unknown, limit: number): string => trimText(JSON.stringify(value) ?? "null", limit)

/** The fields of a record other than `context` and the ones named (those the text already says). */
const rest = (o: JsonRecord, shown: ReadonlyArray<string>): JsonRecord | undefined => {
  const out: Record<string, unknown> = {}
  let any = false
  for (const [k, v] of Object.entries(o)) {
    if (k === "context" || shown.includes(k)) continue
    out[k] = v
    any = true
  }
  return any ? out : undefined
}

/** `(completed, success)`: the status words that are present. */
const state = (...words: ReadonlyArray<string | undefined>): string => {
  const present = words.filter((w): w is string => w !== undefined && w.length > 0)
  return present.length === 0 ? "" : ` (${present.join(", ")})`
}

/** A line and, when there is one, a second part below it. */
const lines = (head: string, body: string | undefined): string =>
  body === undefined || body.length === 0 ? head : `${head}\n${body}`

const itemText = (item: JsonRecord): string => {
  switch (item["type"]) {
    case "agent_message":
    case "reasoning":
    case "plan":
      return trimText(str(item["text"]) ?? "")
    case "decision":
      return trimText(`${str(item["summary"]) ?? ""} — ${str(item["rationale"]) ?? ""}`)
    case "command_execution": {
      const output = str(item["aggregated_output"]) ?? ""
      return lines(
        trimText(
          `$ ${str(item["command"]) ?? ""} (${exitText(item["exit_code"])}, ${str(item["status"]) ?? "?"})`,
          400
        ),
        output === "" ? undefined : trimText(output, 800)
      )
    }
    case "file_change": {
      const changes = Array.isArray(item["changes"]) ? item["changes"] : []
      const paths = changes.map((c) => isRecord(c) ? `${str(c["kind"]) ?? "update"} ${str(c["path"]) ?? "?"}` : "?")
      const diff = str(item["unified_diff"])
      return lines(trimText(paths.join(", "), 400), diff === undefined ? undefined : trimText(diff, 800))
    }
    case "tool_invocation":
    case "mcp_tool_call": {
      const name = str(item["tool_name"]) ?? "tool"
      const labelled = toolLabel(name, item)
      const label = `${item["type"] === "mcp_tool_call" ? "mcp " : ""}${labelled}`
      const args = item["arguments"]
      // Arguments that hold only the subject the label already names are not repeated.
      const onlySubject = isRecord(args) && Object.keys(args).length === 1 && labelled !== name
      const result = str(item["result"])
      return lines(
        trimText(`${label}${state(str(item["status"]), str(item["outcome"]))}`, 400),
        [
          args === undefined || onlySubject ? undefined : json(args, 400),
          result === undefined ? undefined : trimText(result, 800)
        ].filter((part) => part !== undefined).join("\n")
      )
    }
    case "tool_output": {
      const output = str(item["output"]) ?? ""
      const code = item["exit_code"]
      return lines(
        `output of ${str(item["call_id"]) ?? "?"}${
          state(str(item["status"]), code === undefined ? undefined : exitText(code))
        }`,
        output === "" ? undefined : trimText(output, 800)
      )
    }
    case "web_search": {
      const results = Array.isArray(item["results"]) ? item["results"].length : undefined
      return trimText(
        `search: ${str(item["query"]) ?? ""}${
          state(str(item["provider"]), results === undefined ? undefined : `${results} results`)
        }`
      )
    }
    case "harness": {
      const detail = rest(item, ["id", "type", "event", "message"])
      return lines(
        trimText(
          `${str(item["event"]) ?? "harness"}${item["message"] === undefined ? "" : `: ${str(item["message"]) ?? ""}`}`
        ),
        detail === undefined ? undefined : json(detail, 400)
      )
    }
    case "error":
      return trimText(str(item["message"]) ?? "")
    default:
      return json(rest(item, ["id", "type"]) ?? {}, 1200)
  }
}

/** Token usage as one line: `input 1200 (cached 800), output 300`. */
const usageText = (usage: unknown): string | undefined => {
  if (!isRecord(usage)) return undefined
  const input = num(usage["input_tokens"])
  const cached = num(usage["cached_input_tokens"])
  const output = num(usage["output_tokens"])
  return `tokens: input ${input ?? "?"}${cached === undefined || cached === 0 ? "" : ` (cached ${cached})`}, output ${
    output ?? "?"
  }`
}

/**
 * One event as `read_turn` renders it: its type (`item.completed command_execution` for an item)
 * and one compact text. `json` is the event's display JSON, redacted.
 */
export const renderEvent = (json: unknown): { readonly type: string; readonly text: string } => {
  if (!isRecord(json)) return { type: "unknown", text: trimText(JSON.stringify(json) ?? "null") }
  const type = str(json["type"]) ?? "unknown"
  const item = json["item"]
  if (isRecord(item)) return { type: `${type} ${str(item["type"]) ?? "item"}`, text: itemText(item) }
  switch (type) {
    case "error":
      return { type, text: trimText(str(json["message"]) ?? "") }
    case "turn.started": {
      const context = isRecord(json["context"]) ? json["context"] : {}
      const origin = str(context["origin"])
      const goal = str(context["goal"])
      return {
        type,
        text: trimText(
          `turn started${origin === undefined ? "" : ` by ${origin}`}${goal === undefined ? "" : `: ${goal}`}`
        )
      }
    }
    case "turn.completed":
      return { type, text: `turn completed; ${usageText(json["usage"]) ?? "no usage"}` }
    case "turn.failed":
    case "turn.blocked":
      return {
        type,
        text: trimText(`${type === "turn.failed" ? "turn failed" : "turn blocked"}: ${str(json["message"]) ?? ""}`)
      }
    default: {
      const fields = rest(json, ["type"])
      return { type, text: fields === undefined ? type : trimText(JSON.stringify(fields)) }
    }
  }
}
