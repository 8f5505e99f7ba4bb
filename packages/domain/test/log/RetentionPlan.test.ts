import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import {
  ageCutoffSeconds,
  completeAbandonedManifest,
  DEFAULT_RETENTION_POLICY,
  isOlderThanCutoff,
  planRetention,
  type RetentionCandidate,
  type RetentionPolicy
} from "../../src/log/RetentionPlan.ts"
import { formatRfc3339, parseRfc3339 } from "../../src/log/Rfc3339.ts"

const DAY_MS = 86_400_000
/** 2026-10-03T00:00:00Z. */
const NOW = Date.UTC(2026, 9, 3)

const isoDaysAgo = (days: number): string => formatRfc3339(NOW - days * DAY_MS)

const done = (name: string, updatedAt: string, turnCount = 3): RetentionCandidate => ({
  name,
  status: "completed",
  turnCount,
  updatedAt
})

const plan = (candidates: ReadonlyArray<RetentionCandidate>, policy: RetentionPolicy) =>
  planRetention(candidates, policy, NOW).map((c) => `${c.phase}:${c.name}`)

describe("RetentionPlan", () => {
  describe("age cutoff", () => {
    it("is now minus the days in whole seconds, and disabled at 0 days", () => {
      assert.strictEqual(ageCutoffSeconds(30, NOW + 999), NOW / 1000 - 30 * 86_400)
      assert.isUndefined(ageCutoffSeconds(0, NOW))
      assert.strictEqual(ageCutoffSeconds(1_000_000, NOW), 0)
    })

    it("counts a session older only when its second is strictly below the cutoff", () => {
      const cutoff = NOW / 1000
      assert.isTrue(isOlderThanCutoff("2026-10-02T23:59:59.999+00:00", cutoff))
      assert.isFalse(isOlderThanCutoff("2026-10-03T00:00:00+00:00", cutoff))
      assert.isFalse(isOlderThanCutoff("2026-10-03T00:00:00.5+00:00", cutoff))
      assert.isFalse(isOlderThanCutoff("not a time", cutoff))
      assert.isFalse(isOlderThanCutoff("1970-01-01T00:00:00Z", undefined))
    })
  })

  describe("planRetention", () => {
    it("removes zero-turn completed sessions first, whatever their age", () => {
      const out = plan(
        [done("b", isoDaysAgo(0), 0), done("a", isoDaysAgo(1)), done("c", isoDaysAgo(2), 0)],
        DEFAULT_RETENTION_POLICY
      )
      assert.deepStrictEqual(out, ["zero-turn:b", "zero-turn:c"])
    })

    it("removes the oldest surplus over maxSessions by parsed instant, not by string", () => {
      // As strings "…T10:00:00+02:00" sorts after "…T09:00:00Z", but it is one hour earlier.
      const out = plan([
        done("late", "2026-10-02T09:00:00Z"),
        done("early", "2026-10-02T10:00:00+02:00"),
        done("newest", "2026-10-02T12:00:00.000000001Z"),
        done("middle", "2026-10-02T12:00:00Z")
      ], { maxSessions: 2, maxAgeDays: 30 })
      assert.deepStrictEqual(out, ["over-limit:early", "over-limit:late"])
    })

    it("breaks equal instants by directory name", () => {
      const t = "2026-10-01T00:00:00.000+00:00"
      const same = "2026-10-01T02:00:00+02:00"
      const out = plan([done("c", t), done("a", same), done("b", t), done("d", isoDaysAgo(0))], {
        maxSessions: 1,
        maxAgeDays: 30
      })
      assert.deepStrictEqual(out, ["over-limit:a", "over-limit:b", "over-limit:c"])
    })

    it("ranks an unparseable timestamp as newest, so the count limit takes it last and age never does", () => {
      assert.deepStrictEqual(
        plan([done("x", "garbage"), done("y", isoDaysAgo(100))], { maxSessions: 1, maxAgeDays: 30 }),
        [
          "over-limit:y"
        ]
      )
      assert.deepStrictEqual(
        plan([done("x", "garbage"), done("y", isoDaysAgo(100))], { maxSessions: 0, maxAgeDays: 30 }),
        [
          "over-limit:y",
          "over-limit:x"
        ]
      )
      assert.deepStrictEqual(plan([done("x", "garbage")], { maxSessions: 5, maxAgeDays: 1 }), [])
    })

    it("removes sessions older than the cutoff after the count limit, oldest first", () => {
      const out = plan([
        done("fresh", isoDaysAgo(1)),
        done("old", isoDaysAgo(31)),
        done("older", isoDaysAgo(40)),
        done("edge", isoDaysAgo(30))
      ], DEFAULT_RETENTION_POLICY)
      assert.deepStrictEqual(out, ["expired:older", "expired:old"])
    })

    it("combines the phases in order and never lists a directory twice", () => {
      const out = plan([
        done("empty", isoDaysAgo(90), 0),
        done("a", isoDaysAgo(50)),
        done("b", isoDaysAgo(40)),
        done("c", isoDaysAgo(2)),
        done("c", isoDaysAgo(100)),
        done("d", isoDaysAgo(1))
      ], { maxSessions: 3, maxAgeDays: 30 })
      assert.deepStrictEqual(out, ["zero-turn:empty", "over-limit:a", "expired:b"])
    })

    it("removes nothing by age when maxAgeDays is 0", () => {
      const out = plan([done("ancient", "1999-01-01T00:00:00Z"), done("x", isoDaysAgo(5000))], {
        maxSessions: 10,
        maxAgeDays: 0
      })
      assert.deepStrictEqual(out, [])
    })

    it("never chooses an active session, even an empty or ancient one", () => {
      const active: RetentionCandidate = {
        name: "live",
        status: "active",
        turnCount: 0,
        updatedAt: "1999-01-01T00:00:00Z"
      }
      assert.deepStrictEqual(plan([active], { maxSessions: 0, maxAgeDays: 1 }), [])
    })

    const candidates = Arbitrary.array(
      Arbitrary.map(
        Arbitrary.schema(Schema.Tuple([
          Schema.Literals(["a", "b", "c", "d", "e", "f", "g", "h"]),
          Schema.Literals(["active", "completed"]),
          Schema.Int,
          Schema.Int,
          Schema.Boolean
        ])),
        ([name, status, turns, age, parseable]): RetentionCandidate => ({
          name,
          status,
          turnCount: Math.abs(turns) % 3,
          updatedAt: parseable ? isoDaysAgo((Math.abs(age) % 80) - 5) : "?"
        })
      ),
      { maxLength: 12 }
    )

    it.prop(
      "leaves at most maxSessions inactive sessions, none empty, none expired, and takes only the oldest",
      { candidates, maxSessions: Schema.Int, maxAgeDays: Schema.Int },
      ({ candidates, maxAgeDays, maxSessions }) => {
        const policy = { maxSessions: Math.abs(maxSessions) % 6, maxAgeDays: Math.abs(maxAgeDays) % 40 }
        const choices = planRetention(candidates, policy, NOW)
        const chosen = new Set(choices.map((c) => c.name))
        assert.strictEqual(chosen.size, choices.length)
        const firstByName = new Map<string, RetentionCandidate>()
        for (const c of candidates) if (!firstByName.has(c.name)) firstByName.set(c.name, c)
        const cutoff = ageCutoffSeconds(policy.maxAgeDays, NOW)
        for (const choice of choices) {
          const c = firstByName.get(choice.name)
          assert.strictEqual(c?.status, "completed")
          if (choice.phase === "expired") assert.isTrue(isOlderThanCutoff(c?.updatedAt ?? "", cutoff))
          if (choice.phase === "zero-turn") assert.strictEqual(c?.turnCount, 0)
        }
        const kept = [...firstByName.values()].filter((c) => c.status === "completed" && !chosen.has(c.name))
        assert.isAtMost(kept.length, policy.maxSessions)
        for (const k of kept) {
          assert.notStrictEqual(k.turnCount, 0)
          assert.isFalse(isOlderThanCutoff(k.updatedAt, cutoff))
        }
        if (policy.maxAgeDays === 0) assert.isFalse(choices.some((c) => c.phase === "expired"))
        const key = (c: RetentionCandidate) => parseRfc3339(c.updatedAt)?.seconds ?? Number.POSITIVE_INFINITY
        for (const choice of choices.filter((c) => c.phase === "over-limit")) {
          const c = firstByName.get(choice.name)
          if (c === undefined) return assert.fail(`unknown choice ${choice.name}`)
          for (const k of kept) assert.isAtMost(key(c), key(k))
        }
      }
    )
  })

  describe("completeAbandonedManifest", () => {
    const cutoff = NOW / 1000
    const manifest = (status: string, updatedAt: string) =>
      `{"session_id":"s","schema_version":1,"created_at":"x","updated_at":"${updatedAt}","turn_count":2,` +
      `"event_count":9,"status":"${status}","future_key":{"nested":[1,2]}}`

    it("flips an old active manifest to completed, keeping every other key, pretty-printed", () => {
      const out = completeAbandonedManifest(manifest("active", "2026-09-01T00:00:00+00:00"), cutoff)
      assert.strictEqual(
        out,
        JSON.stringify(
          {
            session_id: "s",
            schema_version: 1,
            created_at: "x",
            updated_at: "2026-09-01T00:00:00+00:00",
            turn_count: 2,
            event_count: 9,
            status: "completed",
            future_key: { nested: [1, 2] }
          },
          null,
          2
        )
      )
    })

    it("leaves recent, completed, unparseable and non-object manifests alone, and does nothing when disabled", () => {
      assert.isUndefined(completeAbandonedManifest(manifest("active", "2026-10-03T00:00:00+00:00"), cutoff))
      assert.isUndefined(completeAbandonedManifest(manifest("completed", "2020-01-01T00:00:00Z"), cutoff))
      assert.isUndefined(completeAbandonedManifest(manifest("active", "long ago"), cutoff))
      assert.isUndefined(completeAbandonedManifest("{\"status\":\"active\"}", cutoff))
      assert.isUndefined(completeAbandonedManifest("[\"active\"]", cutoff))
      assert.isUndefined(completeAbandonedManifest("{not json", cutoff))
      assert.isUndefined(completeAbandonedManifest(manifest("active", "2020-01-01T00:00:00Z"), undefined))
    })
  })
})
