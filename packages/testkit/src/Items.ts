/**
 * Builders of item events for tests of what an agent did (explanations, importers): user turns
 * with a task context, commands, tool calls and their outputs, file changes with diffs,
 * decisions, plans. Every builder returns a wire-checked ThreadEvent; `ctx` adds the item
 * context a host records, and leaving it out gives the context-less shape importers of other
 * agents' logs write.
 */
import type { ThreadEvent } from "@logbook/domain"
import { wireEvent } from "./Events.ts"

/** The item phases of the contract. */
export type Phase = "started" | "updated" | "completed"

/** An item context; `activity` classifies commands and tools (inspection, verification, mutation). */
export interface ItemCtx {
  readonly task?: string
  readonly actor?: string
  readonly parent?: string
  readonly turn?: string
  readonly timestamp?: string
  readonly activity?: "inspection" | "verification" | "mutation"
}

const contextOf = (ctx: ItemCtx | undefined) =>
  ctx === undefined ? {} : {
    context: {
      task_id: ctx.task ?? "task-1",
      turn_id: ctx.turn ?? "turn-1",
      actor_id: ctx.actor ?? "agent",
      ...(ctx.parent === undefined ? {} : { parent_actor_id: ctx.parent }),
      timestamp: ctx.timestamp ?? "2026-01-01T00:00:00.000+00:00",
      ...(ctx.activity === undefined ? {} : { activity: ctx.activity })
    }
  }

const item = (phase: Phase, body: Record<string, unknown>, ctx: ItemCtx | undefined): ThreadEvent =>
  wireEvent({ type: `item.${phase}`, item: { ...contextOf(ctx), ...body } })

/** Item event builders. */
export const items = {
  /** A `turn.started` with a task context (`origin` user by default) and an optional goal. */
  turn: (
    task: string,
    goal?: string,
    origin: "user" | "correction" | "plan_approval" | "continuation" | "retry" = "user",
    actor = "agent"
  ): ThreadEvent =>
    wireEvent({
      type: "turn.started",
      context: {
        task_id: task,
        turn_id: `turn-${task}`,
        actor_id: actor,
        origin,
        timestamp: "2026-01-01T00:00:00.000+00:00",
        ...(goal === undefined ? {} : { goal })
      }
    }),
  command: (
    phase: Phase,
    id: string,
    command: string,
    status: "completed" | "failed" | "in_progress",
    exit?: number,
    ctx?: ItemCtx
  ): ThreadEvent =>
    item(phase, {
      id,
      type: "command_execution",
      command,
      aggregated_output: "",
      ...(exit === undefined ? {} : { exit_code: exit }),
      status
    }, ctx),
  tool: (
    phase: Phase,
    id: string,
    name: string,
    status: "completed" | "failed" | "in_progress",
    outcome?: string,
    ctx?: ItemCtx
  ): ThreadEvent =>
    item(phase, {
      id,
      type: "tool_invocation",
      tool_name: name,
      status,
      ...(outcome === undefined ? {} : { outcome })
    }, ctx),
  output: (
    phase: Phase,
    id: string,
    callId: string,
    status: "completed" | "failed" | "in_progress",
    exit?: number,
    ctx?: ItemCtx
  ): ThreadEvent =>
    item(phase, {
      id,
      type: "tool_output",
      call_id: callId,
      output: "",
      ...(exit === undefined ? {} : { exit_code: exit }),
      status
    }, ctx),
  /** A file change of `paths` (all `update`); `diff` becomes `unified_diff` when given. */
  fileChange: (
    phase: Phase,
    id: string,
    paths: ReadonlyArray<string>,
    status: "completed" | "failed",
    diff?: string,
    ctx?: ItemCtx
  ): ThreadEvent =>
    item(phase, {
      id,
      type: "file_change",
      changes: paths.map((path) => ({ path, kind: "update" })),
      status,
      ...(diff === undefined ? {} : { unified_diff: diff })
    }, ctx),
  decision: (id: string, summary: string, rationale: string, ctx?: ItemCtx, alternatives: Array<string> = []) =>
    item("completed", { id, type: "decision", summary, rationale, alternatives, evidence_ids: [] }, ctx),
  plan: (phase: Phase, id: string, text: string, ctx?: ItemCtx) => item(phase, { id, type: "plan", text }, ctx),
  message: (id: string, text: string, ctx?: ItemCtx) => item("completed", { id, type: "agent_message", text }, ctx),
  mcp: (phase: Phase, id: string, name: string, status: "started" | "completed" | "failed", ctx?: ItemCtx) =>
    item(phase, { id, type: "mcp_tool_call", tool_name: name, status }, ctx)
}

/** A one-hunk unified diff of `path` whose new side starts at `line`, adding `added` lines. */
export const unifiedDiff = (path: string, line: number, added: ReadonlyArray<string>): string =>
  [
    `--- a/${path}`,
    `+++ b/${path}`,
    `@@ -${line},1 +${line},${added.length + 1} @@`,
    " context",
    ...added.map((l) => `+${l}`)
  ].join("\n") + "\n"
