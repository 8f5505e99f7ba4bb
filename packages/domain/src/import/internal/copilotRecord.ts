/**
 * Recognition of a GitHub Copilot CLI event record, apart from its mapper so format recognition
 * (in `ImportCursor`) needs no import of the mapper (which imports `ImportCursor`).
 */
import { isRecord } from "./foreignJson.ts"

const COPILOT_TYPE = /^(?:session|user|assistant|tool|system|subagent|hook|skill|abort)\./u

/** Whether a record is a Copilot CLI event envelope: a dotted `type`, object `data`, string `id` and `timestamp`. */
export const isCopilotEvent = (record: unknown): boolean => {
  if (!isRecord(record)) return false
  const type = record["type"]
  return typeof type === "string" && COPILOT_TYPE.test(type) && isRecord(record["data"]) &&
    typeof record["id"] === "string" && typeof record["timestamp"] === "string"
}
