import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Result, Schema } from "effect"
import {
  addKnownIssue,
  completionRatio,
  decodeProgressText,
  encodeProgress,
  isProgressComplete,
  isProgressStalled,
  MilestoneStatus,
  newProgressLedger,
  noteAdvance,
  noteStall,
  ProgressLedger,
  progressToMarkdown,
  setHandoff,
  setMilestones,
  setProgressGoal
} from "../../src/goals/ProgressLedger.ts"
import type { Milestone } from "../../src/goals/ProgressLedger.ts"

const T0 = "2026-01-01T00:00:00Z"
const T1 = "2026-01-01T00:05:00Z"
const T2 = "2026-01-01T00:10:00Z"

const milestone = (id: string, status: MilestoneStatus, description = `step ${id}`): Milestone => ({
  id,
  description,
  status
})

const fresh = newProgressLedger("s1", "ship the feature", T0)

const okDecode = (text: string): ProgressLedger =>
  Result.match(decodeProgressText(text), {
    onFailure: (error) => assert.fail(`expected ${text} to decode: ${error.message}`),
    onSuccess: (ledger) => ledger
  })

describe("ProgressLedger: behaviour", () => {
  it("a new ledger has no milestones, full confidence, no stall and no handoff data", () => {
    assert.deepStrictEqual(fresh, {
      session_id: "s1",
      goal: "ship the feature",
      milestones: [],
      confidence: 1,
      stalled_since: null,
      updated_at: T0,
      previous_session_id: null,
      handoff_summary: null,
      known_issues: [],
      git_checkpoint: null
    })
  })

  it("a ledger without milestones is complete with a ratio of exactly 1", () => {
    assert.strictEqual(completionRatio(fresh), 1)
    assert.isTrue(isProgressComplete(fresh))
  })

  it("the completion ratio counts only done milestones", () => {
    const ledger = setMilestones(fresh, [
      milestone("1", "done"),
      milestone("2", "in_progress"),
      milestone("3", "blocked"),
      milestone("4", "pending")
    ], T1)
    assert.strictEqual(completionRatio(ledger), 0.25)
    assert.isFalse(isProgressComplete(ledger))
    assert.isTrue(isProgressComplete(setMilestones(ledger, [milestone("1", "done")], T2)))
  })

  it("a stall keeps its first instant, lowers confidence by 0.1 and touches updated_at", () => {
    const once = noteStall(fresh, T1)
    const twice = noteStall(once, T2)
    assert.isTrue(isProgressStalled(once))
    assert.strictEqual(once.stalled_since, T1)
    assert.strictEqual(twice.stalled_since, T1)
    assert.strictEqual(twice.updated_at, T2)
    assert.closeTo(twice.confidence, 0.8, 1e-9)
  })

  it("an advance clears the stall, raises confidence by 0.05 and touches updated_at", () => {
    const advanced = noteAdvance(noteStall(fresh, T1), T2)
    assert.isFalse(isProgressStalled(advanced))
    assert.isNull(advanced.stalled_since)
    assert.closeTo(advanced.confidence, 0.95, 1e-9)
    assert.strictEqual(advanced.updated_at, T2)
  })

  it("confidence is clamped to 1 on advance and to 0 on stall", () => {
    assert.strictEqual(noteAdvance(fresh, T1).confidence, 1)
    assert.strictEqual(noteAdvance({ ...fresh, confidence: 0.98 }, T1).confidence, 1)
    assert.strictEqual(noteStall({ ...fresh, confidence: 0.05 }, T1).confidence, 0)
    assert.strictEqual(noteStall({ ...fresh, confidence: 0 }, T1).confidence, 0)
  })

  it("setters replace their field and touch updated_at", () => {
    assert.deepStrictEqual(setProgressGoal(fresh, "new goal", T1), { ...fresh, goal: "new goal", updated_at: T1 })
    assert.deepStrictEqual(
      setHandoff(fresh, { previousSessionId: "s0", summary: "built auth", gitCheckpoint: "def456" }, T1),
      { ...fresh, previous_session_id: "s0", handoff_summary: "built auth", git_checkpoint: "def456", updated_at: T1 }
    )
    const withCheckpoint = setHandoff(fresh, { previousSessionId: "s0", summary: "a", gitCheckpoint: "x" }, T1)
    assert.isNull(setHandoff(withCheckpoint, { previousSessionId: "s0", summary: "b" }, T2).git_checkpoint)
    assert.deepStrictEqual(
      addKnownIssue(addKnownIssue(fresh, "rate limiting missing", T1), "flaky tests", T2),
      { ...fresh, known_issues: ["rate limiting missing", "flaky tests"], updated_at: T2 }
    )
  })
})

describe("ProgressLedger: Markdown", () => {
  it("a new ledger renders the header and the no-milestones line", () => {
    assert.strictEqual(
      progressToMarkdown(fresh),
      "# Session Progress\n\n" +
        "**Goal:** ship the feature\n" +
        "**Completion:** 100%\n" +
        "**Confidence:** 1.00\n" +
        "**Updated:** 2026-01-01T00:00:00Z\n\n" +
        "\n_No tracked milestones yet._\n"
    )
  })

  it("milestones render as a checklist with one mark per status and a rounded completion", () => {
    const ledger = setMilestones(fresh, [
      milestone("1", "done", "design"),
      milestone("2", "in_progress", "implement"),
      milestone("3", "pending", "verify")
    ], T1)
    assert.strictEqual(
      progressToMarkdown(ledger),
      "# Session Progress\n\n" +
        "**Goal:** ship the feature\n" +
        "**Completion:** 33%\n" +
        "**Confidence:** 1.00\n" +
        "**Updated:** 2026-01-01T00:05:00Z\n\n" +
        "\n## Milestones\n\n" +
        "[x] 1 — design\n" +
        "[~] 2 — implement\n" +
        "[ ] 3 — verify\n"
    )
  })

  it("a stalled ledger with handoff data and known issues renders every optional section in order", () => {
    let ledger = setMilestones(fresh, [
      milestone("a", "done", "design"),
      milestone("b", "done", "build"),
      milestone("c", "blocked", "deploy")
    ], T0)
    ledger = setHandoff(ledger, { previousSessionId: "s0", summary: "built auth", gitCheckpoint: "def456" }, T0)
    ledger = addKnownIssue(ledger, "tests are flaky", T0)
    ledger = addKnownIssue(ledger, "no retries", T0)
    ledger = noteStall(ledger, T1)
    ledger = noteStall(ledger, T2)
    assert.strictEqual(
      progressToMarkdown(ledger),
      "# Session Progress\n\n" +
        "**Goal:** ship the feature\n" +
        "**Completion:** 67%\n" +
        "**Confidence:** 0.80\n" +
        "**Stalled since:** 2026-01-01T00:05:00Z\n" +
        "**Updated:** 2026-01-01T00:10:00Z\n\n" +
        "**Handed off from:** s0\n" +
        "**Handoff summary:** built auth\n" +
        "**Git checkpoint:** `def456`\n" +
        "\n## Known Issues\n\n" +
        "- tests are flaky\n" +
        "- no retries\n" +
        "\n## Milestones\n\n" +
        "[x] a — design\n" +
        "[x] b — build\n" +
        "[!] c — deploy\n"
    )
  })

  it("a handoff without a checkpoint and without milestones omits the checkpoint line", () => {
    const ledger = setHandoff(
      { ...fresh, confidence: 0.456 },
      { previousSessionId: "s4", summary: "implemented core" },
      T1
    )
    assert.strictEqual(
      progressToMarkdown(ledger),
      "# Session Progress\n\n" +
        "**Goal:** ship the feature\n" +
        "**Completion:** 100%\n" +
        "**Confidence:** 0.46\n" +
        "**Updated:** 2026-01-01T00:05:00Z\n\n" +
        "**Handed off from:** s4\n" +
        "**Handoff summary:** implemented core\n" +
        "\n_No tracked milestones yet._\n"
    )
  })

  it("completion rounds half up to a whole percent", () => {
    const eighth = setMilestones(fresh, [
      milestone("1", "done"),
      ...["2", "3", "4", "5", "6", "7", "8"].map((id) => milestone(id, "pending"))
    ], T1)
    assert.include(progressToMarkdown(eighth), "**Completion:** 13%\n")
  })
})

describe("ProgressLedger: wire format", () => {
  it("a new ledger encodes to compact JSON with every field in declaration order", () => {
    assert.strictEqual(
      encodeProgress(fresh),
      "{\"session_id\":\"s1\",\"goal\":\"ship the feature\",\"milestones\":[],\"confidence\":1," +
        "\"stalled_since\":null,\"updated_at\":\"2026-01-01T00:00:00Z\",\"previous_session_id\":null," +
        "\"handoff_summary\":null,\"known_issues\":[],\"git_checkpoint\":null}"
    )
  })

  it("a reference ledger without handoff fields decodes with their defaults", () => {
    const text = JSON.stringify({
      session_id: "s1",
      goal: "g",
      milestones: [{ id: "1", description: "design", status: "in_progress" }],
      confidence: 0.9,
      stalled_since: "2026-01-01T00:00:00+00:00",
      updated_at: "2026-01-01T00:00:00.123456+00:00"
    })
    assert.deepStrictEqual(okDecode(text), {
      session_id: "s1",
      goal: "g",
      milestones: [{ id: "1", description: "design", status: "in_progress" }],
      confidence: 0.9,
      stalled_since: "2026-01-01T00:00:00+00:00",
      updated_at: "2026-01-01T00:00:00.123456+00:00",
      previous_session_id: null,
      handoff_summary: null,
      known_issues: [],
      git_checkpoint: null
    })
  })

  for (const field of ["session_id", "goal", "milestones", "confidence", "stalled_since", "updated_at"]) {
    it(`a ledger without ${field} does not decode`, () => {
      const text = JSON.stringify({ ...fresh, [field]: undefined })
      assert.isTrue(Result.isFailure(decodeProgressText(text)))
    })
  }

  it("a ledger with an unknown milestone status or broken JSON does not decode", () => {
    const text = JSON.stringify({ ...fresh, milestones: [{ id: "1", description: "d", status: "skipped" }] })
    assert.isTrue(Result.isFailure(decodeProgressText(text)))
    assert.isTrue(Result.isFailure(decodeProgressText("{\"session_id\"")))
  })

  const sameLedger = Schema.toEquivalence(ProgressLedger)

  it.prop("encoding then decoding any ledger gives the same ledger", [ProgressLedger], ([ledger]) => {
    assert.isTrue(sameLedger(okDecode(encodeProgress(ledger)), ledger))
  })

  it.prop(
    "any run of advances and stalls keeps confidence within 0 and 1 and the Markdown consistent",
    {
      confidence: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })),
      steps: Arbitrary.array(Arbitrary.schema(Schema.Boolean), { maxLength: 40 }),
      statuses: Arbitrary.array(Arbitrary.schema(MilestoneStatus), { maxLength: 12 })
    },
    ({ confidence, statuses, steps }) => {
      let ledger = setMilestones({ ...fresh, confidence }, statuses.map((s, i) => milestone(String(i), s)), T0)
      for (const advance of steps) ledger = advance ? noteAdvance(ledger, T1) : noteStall(ledger, T2)
      assert.isAtLeast(ledger.confidence, 0)
      assert.isAtMost(ledger.confidence, 1)
      const ratio = completionRatio(ledger)
      assert.isAtLeast(ratio, 0)
      assert.isAtMost(ratio, 1)
      const markdown = progressToMarkdown(ledger)
      assert.include(markdown, `**Completion:** ${Math.round(ratio * 100)}%\n`)
      assert.include(markdown, `**Confidence:** ${ledger.confidence.toFixed(2)}\n`)
      assert.strictEqual(markdown.includes("**Stalled since:**"), isProgressStalled(ledger))
    }
  )
})
