/**
 * The explanation feature's public face (docs/explain.md): what the agent did, with evidence —
 * the model types, the reducer that folds a session's retained records into a model, and the
 * paging of a model. Re-exports only; the fold is split along its seams: the model types
 * (`ExplanationModel.ts`), the fold (`ExplanationFold.ts`), model assembly
 * (`ExplanationAssembly.ts`), paging (`ExplanationPaging.ts`) and the verification classifier
 * (`VerificationCommand.ts`), with the field accessors,
 * record reading, state and unified-diff parsing under `internal/`.
 *
 * **Gotchas**: identities are `(task, actor, item id)`; terminal states come only from
 * `item.completed` and are never regressed by later updates; tool outputs fold into the
 * invocation named by their `call_id`.
 */
export type { ExplanationFold } from "./ExplanationFold.ts"
export { makeExplanationFold } from "./ExplanationFold.ts"
export type {
  AgentNode,
  DecisionEntry,
  EvidenceCompleteness,
  EvidenceRef,
  ExplanationEntry,
  ExplanationModel,
  ExplanationRecord,
  ExplanationScope,
  GraphEdge,
  OperationKind,
  ReviewSignal,
  TokenBreakdownEntry,
  VerificationEntry,
  VerificationStatus
} from "./ExplanationModel.ts"
export type { ExplanationPage } from "./ExplanationPaging.ts"
export { evidenceReferences, EXPLANATION_PAGE_BYTES, pageExplanation } from "./ExplanationPaging.ts"
export { toolLabel } from "./internal/eventAccess.ts"
export type { Transcript, TranscriptEntry, TranscriptEntryKind, TranscriptFold, TranscriptTurn } from "./Transcript.ts"
export { makeTranscriptFold, TRANSCRIPT_LIMITS } from "./Transcript.ts"
export type { VerificationKind } from "./VerificationCommand.ts"
export { classifyVerificationCommand, isVerificationCommand, MAX_CLASSIFIED_CHARS } from "./VerificationCommand.ts"
