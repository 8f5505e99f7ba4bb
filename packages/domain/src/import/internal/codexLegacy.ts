/**
 * The header of a legacy Codex rollout (Codex until mid 2025), shared by format recognition and
 * the rollout mapper (a module of its own so neither imports the other).
 */
import { isRecord } from "./foreignJson.ts"

/**
 * Whether a record is the header of a legacy rollout: a bare `{id, timestamp, instructions}`
 * object (`instructions` a string or null), no `type`, no `payload`, no `sessionId`.
 */
export const isLegacyCodexHeader = (record: unknown): boolean =>
  isRecord(record) && typeof record["id"] === "string" && record["id"].length > 0 &&
  typeof record["timestamp"] === "string" && "instructions" in record && !("type" in record) &&
  !("payload" in record) && !("sessionId" in record)
