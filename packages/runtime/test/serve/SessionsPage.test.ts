/**
 * The Sessions page's server-side listing: for any store and any query, the pages partition the
 * matching sessions (each at most one page long, none twice, none missed, in the asked order), a
 * page beyond the last does not exist, and the parameters outside the vocabulary are refused.
 */
import { assert, describe, it } from "@effect/vitest"
import type { SessionSummary } from "@logbook/projections"
import { Schema } from "effect"
import type { SessionsQuery } from "../../src/serve/SessionsPage.ts"
import {
  agentOf,
  BadParameter,
  PAGE_SIZE,
  parseSessionsQuery,
  sliceSessions,
  SORTS
} from "../../src/serve/SessionsPage.ts"

const Row = Schema.Struct({
  agent: Schema.Literals(["codex", "claude", "host"]),
  status: Schema.Literals(["active", "completed"]),
  turns: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4 })),
  minute: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 9 }))
})

const Query = Schema.Struct({
  sort: Schema.Literals(SORTS),
  order: Schema.Literals(["asc", "desc"]),
  status: Schema.Literals(["", "active", "completed"]),
  agent: Schema.Literals(["", "codex", "host"]),
  text: Schema.Literals(["", "1", "x"]),
  from: Schema.Literals(["", "2026-01-01", "2026-01-02"]),
  to: Schema.Literals(["", "2025-12-31", "2026-01-01"])
})

const summaries = (rows: ReadonlyArray<typeof Row.Type>): Array<SessionSummary> =>
  rows.map((r, i) => {
    const id = `${r.agent === "host" ? "" : `${r.agent}-`}s${i}`
    const at = r.minute === 9 ? "2025-12-31T23:59:00+00:00" : `2026-01-01T00:0${r.minute}:00+00:00`
    return {
      id,
      manifestSessionId: id,
      status: r.status,
      turnCount: r.turns,
      eventCount: r.turns * 3,
      createdAt: at,
      updatedAt: at,
      inTurn: false,
      live: false,
      lockIsLink: false,
      pinned: false,
      pinIsLink: false,
      imported: false
    }
  })

describe("sliceSessions", () => {
  it.prop(
    "the pages of any query partition the matching sessions in the asked order",
    [Schema.Array(Row).check(Schema.isMaxLength(170)), Query],
    ([rows, q]) => {
      const sessions = summaries(rows)
      const base: SessionsQuery = { ...q, page: 1 }
      const matching = sessions.filter((s) =>
        s.id.toLowerCase().includes(q.text) && (q.status === "" || s.status === q.status) &&
        (q.agent === "" || agentOf(s.id) === q.agent) &&
        (q.from === "" || s.updatedAt.slice(0, 10) >= q.from) && (q.to === "" || s.updatedAt.slice(0, 10) <= q.to)
      )
      const first = sliceSessions(sessions, base)
      assert.isDefined(first)
      const pages = first?.pages ?? 0
      assert.strictEqual(pages, Math.max(1, Math.ceil(matching.length / PAGE_SIZE)))
      const seen: Array<SessionSummary> = []
      for (let page = 1; page <= pages; page++) {
        const slice = sliceSessions(sessions, { ...base, page })
        assert.isDefined(slice)
        assert.isAtMost(slice?.rows.length ?? 0, PAGE_SIZE)
        seen.push(...(slice?.rows ?? []))
      }
      assert.isUndefined(sliceSessions(sessions, { ...base, page: pages + 1 }))
      assert.deepStrictEqual(seen.map((s) => s.id).sort(), matching.map((s) => s.id).sort())
      assert.strictEqual(new Set(seen.map((s) => s.id)).size, seen.length)
      const key = (s: SessionSummary): string | number =>
        q.sort === "turns" ? s.turnCount : q.sort === "events" ? s.eventCount : q.sort === "id" ? s.id : s.updatedAt
      for (let i = 1; i < seen.length; i++) {
        const a = seen[i - 1]
        const b = seen[i]
        if (a === undefined || b === undefined) continue
        const ka = key(a)
        const kb = key(b)
        if (ka !== kb) assert.isTrue(q.order === "asc" ? ka < kb : ka > kb, `${String(ka)} then ${String(kb)}`)
        else assert.isTrue(a.id < b.id, "ties are ordered by id")
      }
    }
  )
})

describe("parseSessionsQuery", () => {
  it("reads the defaults and refuses values outside the vocabulary", () => {
    const q = parseSessionsQuery(new URLSearchParams(""))
    assert.deepStrictEqual(q, {
      text: "",
      status: "",
      agent: "",
      sort: "updated",
      order: "desc",
      from: "",
      to: "",
      page: 1
    })
    for (
      const bad of [
        "from=yesterday",
        "to=2026-1-1",
        "page=0",
        "page=1.5",
        "page=99999999999",
        "sort=name",
        "order=up",
        "status=x",
        "agent=notepad",
        `q=${"a".repeat(201)}`
      ]
    ) {
      assert.instanceOf(parseSessionsQuery(new URLSearchParams(bad)), BadParameter, bad)
    }
  })
})
