/**
 * Counting helpers shared by the import pipelines and their report.
 */
/** Adds `by` to `counts[key]`. */
export const bump = (counts: Record<string, number>, key: string, by = 1): void => {
  counts[key] = (counts[key] ?? 0) + by
}
