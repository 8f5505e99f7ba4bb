/**
 * Token usage counters shared by every feature that sums usage (importers while a turn is open,
 * explanations over a session): the four counters of the contract's `Usage`, checked non-negative.
 */
import { Schema } from "effect"

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** Token counters while a turn is open (the four counters of `Usage`). */
export const UsageTotals = Schema.Struct({
  input_tokens: Count,
  cached_input_tokens: Count,
  cache_creation_tokens: Count,
  output_tokens: Count
})

/** Token counters while a turn is open. */
export type UsageTotals = typeof UsageTotals.Type

/** No tokens. */
export const zeroUsage: UsageTotals = {
  input_tokens: 0,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: 0
}

/** Counter-wise sum of two usages. */
export const addUsage = (a: UsageTotals, b: UsageTotals): UsageTotals => ({
  input_tokens: a.input_tokens + b.input_tokens,
  cached_input_tokens: a.cached_input_tokens + b.cached_input_tokens,
  cache_creation_tokens: a.cache_creation_tokens + b.cache_creation_tokens,
  output_tokens: a.output_tokens + b.output_tokens
})
