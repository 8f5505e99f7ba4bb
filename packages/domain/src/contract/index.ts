/**
 * The ThreadEvent contract: the event and item Schemas, the canonical encoder, the line classifier, the
 * lifecycle kinds, the `matrix.updated` wire shapes, usage counters, the search tokenizer, the redaction
 * policy every exit applies and the terminal sanitiser. Every other feature of the domain builds on this folder.
 */
export { exceedsJsonDepth, MAX_JSON_DEPTH } from "../internal/jsonText.ts"
export * from "./Classify.ts"
export * from "./Encode.ts"
export * from "./FastDecode.ts"
export * from "./LifecycleKind.ts"
export * from "./MatrixSnapshot.ts"
export * from "./MatrixSpec.ts"
export * from "./Redaction.ts"
export * from "./SearchText.ts"
export * from "./StoredEvent.ts"
export * from "./TerminalText.ts"
export * from "./ThreadEvent.ts"
export * from "./ThreadItem.ts"
export * from "./Usage.ts"
