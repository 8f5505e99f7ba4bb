/**
 * Explanations read from disk: the revision binds the retained bytes, the incremental explainer
 * agrees with a from-scratch reduction after any appends, evidence references are checked by
 * session, offset and digest, and hostile recorded text is harmless in every renderer.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { SessionFs } from "@logbook/store"
import { emptyExplanationModel } from "@logbook/testkit"
import {
  appendAll,
  ev,
  items,
  nodeLayer,
  openLog,
  pathsOf,
  plantSession,
  sessionsRoot,
  tempDir,
  unifiedDiff
} from "@logbook/testkit"
import { Effect, Schema } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EvidencePage } from "../../src/explain/Evidence.ts"
import { queryEvidence } from "../../src/explain/Evidence.ts"
import { makeExplainer, queryExplanation } from "../../src/explain/Explanation.ts"
import { renderHtml } from "../../src/explain/render/ExplanationHtml.ts"
import { renderDetails, renderDiagram, renderSummary } from "../../src/explain/render/ExplanationText.ts"

const jsonl = (events: ReadonlyArray<ThreadEvent>) => events.map((e) => `${encodeLine(e)}\n`).join("")
const sha = (text: string | Uint8Array) => createHash("sha256").update(text).digest("hex")

const t = { task: "t1" }
const POOL: ReadonlyArray<ThreadEvent> = [
  items.turn("t1", "fix the parser"),
  items.command("started", "c1", "npm test", "in_progress", undefined, { ...t, activity: "verification" }),
  items.command("completed", "c1", "npm test", "completed", 0, { ...t, activity: "verification" }),
  items.fileChange("completed", "e1", ["src/parse.ts"], "completed", unifiedDiff("src/parse.ts", 4, ["x"]), t),
  items.tool("completed", "call", "read_file", "completed", "success", t),
  items.output("completed", "call:output", "call", "completed", 0, t),
  items.decision("d1", "Keep the old API", "Callers depend on it", t),
  items.turn("t2", "second task"),
  ev.failed("boom"),
  ev.completed(),
  items.message("m", "hello")
]

const session = (dir: string, name: string, events: string) => {
  plantSession(dir, name, { events })
  return path.join(dir, name, "events.jsonl")
}

layer(SessionFs.layerNode)("Explanation", (it) => {
  it.effect("the revision is the SHA-256 of the retained bytes and repeats for an unchanged log", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-explain-")
      const text = jsonl(POOL)
      session(dir, "s1", text)
      const a = yield* queryExplanation(dir, "s1", "session")
      const b = yield* queryExplanation(dir, "s1", "session")
      assert.strictEqual(a.revision, sha(text))
      assert.deepStrictEqual(a, b)
      assert.strictEqual(a.goals.length, 2)
      assert.strictEqual(a.failures.length, 1)
    }))

  it.effect("an unterminated last line is explained only once its newline arrives", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-explain-")
      const full = jsonl(POOL.slice(0, 3))
      const events = session(dir, "s1", full.slice(0, -10))
      const explainer = yield* makeExplainer(dir, "s1")
      const partial = yield* explainer.explain("session")
      assert.strictEqual(partial.completeness.malformed_records, 0)
      assert.strictEqual(partial.actions[0]?.status, "in progress")
      fs.writeFileSync(events, full)
      const whole = yield* explainer.explain("session")
      assert.strictEqual(whole.actions[0]?.status, "completed")
      assert.deepStrictEqual(whole, yield* queryExplanation(dir, "s1", "session"))
    }))

  it.effect("a rewritten log is read again from the start", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-explain-")
      const events = session(dir, "s1", jsonl(POOL))
      const explainer = yield* makeExplainer(dir, "s1")
      yield* explainer.explain("session")
      // A cap rewrite keeps a suffix: the file's first lines are gone.
      const suffix = jsonl([...POOL.slice(7), ...POOL.slice(0, 4)])
      fs.writeFileSync(events, suffix)
      const after = yield* explainer.explain("session")
      assert.deepStrictEqual(after, yield* queryExplanation(dir, "s1", "session"))
      assert.strictEqual(after.revision, sha(suffix))
    }))

  it.effect.prop(
    "after random appends the incremental explainer equals a from-scratch reduction",
    { picks: Schema.Array(Schema.Int), cuts: Schema.Array(Schema.Int) },
    ({ cuts, picks }) =>
      Effect.gen(function*() {
        const dir = yield* tempDir("logbook-explain-prop-")
        const text = jsonl(picks.slice(0, 30).map((p) => POOL[Math.abs(p) % POOL.length] ?? ev.completed()))
        const events = session(dir, "s1", "")
        const explainer = yield* makeExplainer(dir, "s1")
        const points = [...new Set(cuts.map((c) => Math.abs(c) % (text.length + 1)))].sort((a, b) => a - b)
        for (const at of [...points, text.length]) {
          fs.writeFileSync(events, text.slice(0, at))
          const incremental = yield* explainer.explain("task")
          const scratch = yield* queryExplanation(dir, "s1", "task")
          assert.deepStrictEqual(incremental, scratch)
        }
      }),
    { arbitrary: { runs: 25 }, timeout: 120_000 }
  )

  it.effect("evidence is bound to its session, offset and digest", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-explain-")
      const secret = items.command("completed", "c9", "login password=hunter2 ok", "completed", 0, t)
      const lines = [POOL[0], secret].map((e) => `${encodeLine(e ?? ev.completed())}\n`)
      session(dir, "s1", lines.join(""))
      const offset = Buffer.byteLength(lines[0] ?? "")
      const digest = sha(lines[1] ?? "")
      const page = yield* queryEvidence(dir, "s1", { sessionId: "s1", offset, digest })
      assert.include(page.text, "command_execution")
      assert.notInclude(page.text, "hunter2")
      assert.strictEqual(page.next_offset, null)
      const wrongDigest = yield* Effect.flip(queryEvidence(dir, "s1", { offset, digest: sha("other") }))
      assert.strictEqual(wrongDigest._tag, "EvidenceUnavailable")
      const midLine = yield* Effect.flip(queryEvidence(dir, "s1", { offset: offset + 1, digest }))
      assert.strictEqual(midLine._tag, "EvidenceUnavailable")
      const foreign = yield* Effect.flip(queryEvidence(dir, "s1", { sessionId: "s2", offset, digest }))
      assert.strictEqual(foreign._tag, "EvidenceForeignSession")
      // Evicted: the line is gone after a rewrite.
      fs.writeFileSync(path.join(dir, "s1", "events.jsonl"), lines[0] ?? "")
      const evicted = yield* Effect.flip(queryEvidence(dir, "s1", { offset, digest }))
      assert.strictEqual(evicted._tag, "EvidenceUnavailable")
    }))

  it.effect("evidence pages end on character boundaries and cover the whole text", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-explain-")
      const line = `${encodeLine(items.message("m", "é€😀".repeat(50)))}\n`
      session(dir, "s1", line)
      const ref = { offset: 0, digest: sha(line) }
      const pieces: Array<string> = []
      let at: number | null = 0
      while (at !== null) {
        const page: EvidencePage = yield* queryEvidence(dir, "s1", ref, at, 3)
        assert.isFalse(page.text.includes("\ufffd"))
        pieces.push(page.text)
        at = page.next_offset
      }
      const whole = yield* queryEvidence(dir, "s1", ref)
      assert.strictEqual(pieces.join(""), whole.text)
      const inside = yield* Effect.flip(queryEvidence(dir, "s1", ref, whole.text.indexOf("é") + 1, 10))
      assert.strictEqual(inside._tag, "InvalidEvidencePage")
    }))

  it.effect("hostile recorded text is harmless in every renderer", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-explain-")
      const hostile = "</pre><script>alert(1)</script><img src=x onerror=alert(2)> [click](http://evil) " +
        "password=hunter2 \u001b[31mred\u001b[0m\u0007 " + "L".repeat(5000)
      const hc = { task: "h", activity: "verification" } as const
      session(
        dir,
        "s1",
        jsonl([
          items.turn("h", hostile),
          items.command("completed", "c1", hostile, "failed", 1, hc),
          items.fileChange("completed", "e1", [`src/${hostile}.ts`], "completed", undefined, { task: "h" }),
          items.decision("d", hostile, hostile, { task: "h" }, [hostile])
        ])
      )
      const model = yield* queryExplanation(dir, "s1")
      const summary = renderSummary(model)
      assert.isAtMost(summary.trimEnd().split("\n").length, 20)
      assert.notInclude(summary, "](http://evil)")
      assert.include(summary, "\\[click\\]\\(http://evil\\)")
      const goalRef = model.goals[0]?.evidence
      assert.isDefined(goalRef)
      const page = yield* queryEvidence(dir, "s1", { offset: goalRef?.offset ?? 0, digest: goalRef?.digest ?? "" })
      const html = renderHtml(model)
      // Embedded evidence is escaped and redacted too (and bounded by its page, not by the label limit).
      const withEvidence = renderHtml(model, { evidence: [page] })
      assert.include(withEvidence, `id="evidence-${goalRef?.offset}"`)
      assert.include(withEvidence, "(evidence unavailable in this report)")
      for (const bad of ["<script", "<img", "hunter2", "\u001b"]) assert.notInclude(withEvidence, bad)
      assert.notInclude(html, "<script")
      assert.notInclude(html, "<img")
      assert.include(html, "&lt;script&gt;")
      for (const out of [summary, renderDetails(model), renderDiagram(model, 40), html, JSON.stringify(model)]) {
        assert.notInclude(out, "hunter2")
        assert.notInclude(out, "\u001b")
        assert.notInclude(out, "\u0007")
        assert.notInclude(out, "L".repeat(1000))
      }
      for (const row of renderDiagram(model, 40).trimEnd().split("\n")) assert.isAtMost([...row].length, 40)
    }))
})

describe("Explanation of a live session", () => {
  it.effect("re-explaining after appends reads only the new bytes, and never takes the session lock", () =>
    Effect.gen(function*() {
      const { root } = yield* sessionsRoot("explain-live")
      const log = yield* openLog(root, "live", { maxEvents: 0, maxBytes: 0 })
      yield* appendAll(log, [...POOL.slice(0, 7), ev.completed()])
      yield* log.flush
      // The writer holds the lock; the explainer reads anyway.
      const explainer = yield* makeExplainer(root, "live")
      const first = yield* explainer.explain("session")
      const events = pathsOf(root, "live").events
      assert.strictEqual(explainer.bytesRead(), fs.statSync(events).size)
      yield* appendAll(log, [items.turn("t3", "third task"), ev.completed()])
      yield* log.flush
      const second = yield* explainer.explain("session")
      const lastLine = Buffer.byteLength(`${encodeLine(ev.completed())}\n`)
      // The new bytes, plus the last line read before (re-checked to notice a rewrite).
      assert.strictEqual(explainer.bytesRead(), fs.statSync(events).size + lastLine)
      assert.strictEqual(second.goals.length, first.goals.length + 1)
      assert.deepStrictEqual(second, yield* queryExplanation(root, "live", "session"))
    }).pipe(Effect.provide(nodeLayer())))
})

describe("Explanation renderers", () => {
  it("the summary names every section even for an empty session, and counts recorded actions with the latest failed one", () => {
    const empty = emptyExplanationModel("task", sha(""))
    const summary = renderSummary(empty)
    for (const s of ["## Goal", "## Changes", "## Decisions", "## Verification", "## Review first"]) {
      assert.include(summary, s)
    }
    assert.include(summary, "No verification command recorded.")
    assert.include(summary, "Evidence: 0 malformed, 0 unknown, 0 legacy, 0 evicted turns.")
    assert.notInclude(summary, "Actions:")
    const action = (label: string, status: string, offset: number) => ({
      kind: "command" as const,
      label,
      status,
      evidence: { session_id: "s", offset, length: 1, digest: sha(label), item_id: null },
      task_id: null,
      actor_id: null,
      parent_actor_id: null,
      timestamp: null,
      path: null,
      line: null
    })
    const busy = renderSummary({
      ...empty,
      actions: [action("npm test", "failed", 0), action("ls", "completed", 10), action("cat a.ts", "completed", 20)]
    })
    assert.include(
      busy,
      `Actions: 3 recorded, 1 failed; latest failed: npm test [failed] [evidence](logbook-evidence:s:0:`
    )
    const quiet = renderSummary({
      ...empty,
      actions: [action("ls", "completed", 10), action("cat a.ts", "completed", 20)]
    })
    assert.include(quiet, "Actions: 2 recorded, 0 failed; latest: cat a\\.ts [completed]")
  })
})
