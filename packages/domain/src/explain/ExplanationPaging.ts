/**
 * What the reader does with a finished model: list every evidence reference it cites (so each
 * can be checked against the log) and cut it into pages of bounded size for `--json` paging and
 * the query API. Kept apart from the fold and the assembly because it works on any model.
 *
 * **Gotchas**: a page slices every collection by the same window, so page n of `goals` and page
 * n of `graph` come together; the scalars (status, usage, counts) repeat on every page.
 */
import type { EvidenceRef, ExplanationEntry, ExplanationModel } from "./ExplanationModel.ts"

/** Every evidence reference of a model, sorted by offset and de-duplicated. */
export const evidenceReferences = (model: ExplanationModel): ReadonlyArray<EvidenceRef> => {
  const all: Array<EvidenceRef> = []
  const facts = (xs: ReadonlyArray<ExplanationEntry>) => xs.forEach((x) => all.push(x.evidence))
  facts(model.goals)
  facts(model.actions)
  facts(model.changes)
  facts(model.failures)
  facts(model.plan_evolution)
  model.decisions.forEach((d) => all.push(d.fact.evidence))
  model.verification.forEach((v) => all.push(v.fact.evidence))
  model.token_breakdowns.forEach((t) => all.push(t.fact.evidence))
  model.review_priorities.forEach((r) => all.push(r.fact.evidence))
  all.sort((a, b) => a.offset - b.offset || a.digest.localeCompare(b.digest))
  return all.filter((e, i) => {
    const prev = all[i - 1]
    return prev === undefined || prev.offset !== e.offset || prev.digest !== e.digest
  })
}

/** The bound of one serialised explanation page. */
export const EXPLANATION_PAGE_BYTES = 64 * 1024

/** One page of a model: every collection sliced the same way, scalars repeated. */
export interface ExplanationPage {
  readonly model: ExplanationModel
  readonly offset: number
  readonly next_offset: number | null
}

/**
 * Pages a model: every collection sliced `[offset, offset + count)` with `count` starting at 32
 * and halved until the page serialises to at most 64 KiB (or `count` is 1); `next_offset` is
 * null when no collection is longer.
 */
export const pageExplanation = (model: ExplanationModel, offset: number): ExplanationPage => {
  const start = Math.max(0, Math.floor(offset))
  const longest = Math.max(
    model.goals.length,
    model.turns.length,
    model.actions.length,
    model.changes.length,
    model.edits.length,
    model.decisions.length,
    model.verification.length,
    model.token_breakdowns.length,
    model.failures.length,
    model.review_priorities.length,
    model.plan_evolution.length,
    model.agents.length,
    model.graph.length,
    model.completeness.warnings.length
  )
  const slice = (count: number): ExplanationModel => {
    const s = <A>(xs: ReadonlyArray<A>) => xs.slice(start, start + count)
    return {
      ...model,
      goals: s(model.goals),
      turns: s(model.turns),
      actions: s(model.actions),
      changes: s(model.changes),
      edits: s(model.edits),
      decisions: s(model.decisions),
      verification: s(model.verification),
      token_breakdowns: s(model.token_breakdowns),
      failures: s(model.failures),
      review_priorities: s(model.review_priorities),
      plan_evolution: s(model.plan_evolution),
      agents: s(model.agents),
      graph: s(model.graph),
      completeness: { ...model.completeness, warnings: s(model.completeness.warnings) }
    }
  }
  const encoder = new TextEncoder()
  let count = 32
  let page = slice(count)
  while (count > 1 && encoder.encode(JSON.stringify(page)).length > EXPLANATION_PAGE_BYTES) {
    count = Math.floor(count / 2)
    page = slice(count)
  }
  return { model: page, offset: start, next_offset: start + count < longest ? start + count : null }
}
