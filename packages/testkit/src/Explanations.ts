/**
 * An explanation model with nothing in it: what renderer tests start from when the sections'
 * empty forms (or a section added beside the model, like the workspace snapshot) are the subject.
 */
import type { ExplanationModel } from "@logbook/domain"

/** The model of a session with no recorded events: every list empty, status unavailable. */
export const emptyExplanationModel = (
  scope: ExplanationModel["scope"] = "session",
  revision = "0".repeat(64)
): ExplanationModel => ({
  session_id: "s",
  revision,
  scope,
  task_id: null,
  status: "unavailable",
  goals: [],
  turns: [],
  actions: [],
  changes: [],
  edits: [],
  edit_operations: 0,
  decisions: [],
  verification: [],
  token_breakdowns: [],
  failures: [],
  review_priorities: [],
  plan_evolution: [],
  agents: [],
  graph: [],
  usage: null,
  cost_usd: null,
  completeness: { malformed_records: 0, unknown_records: 0, legacy_records: 0, evicted_turns: 0, warnings: [] }
})
