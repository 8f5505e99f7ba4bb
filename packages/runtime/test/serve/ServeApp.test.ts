/**
 * The `logbook serve` handler in process, through a Web `Request` handler (no socket): the token
 * and `Host` guard, status codes of every route, pagination bounds, refusal of traversal-shaped
 * ids and bad offsets, HTML escaping and redaction of hostile recorded text, evidence links from
 * the explanation to the events, and the live stream receiving an event flushed after the page.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import { ev, items, plantSession, tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import { HttpEffect } from "effect/http"
import * as fs from "node:fs"
import * as path from "node:path"
import { hostPolicy, serveApp, TOKEN_COOKIE } from "../../src/serve/index.ts"
import { storeLayerNode } from "../../src/SessionMemory.ts"

const TOKEN = "test-token-0123456789abcdefghijklmnopqrstuv"
const HOST = "127.0.0.1:8765"

const jsonl = (events: ReadonlyArray<ThreadEvent>) => events.map((e) => `${encodeLine(e)}\n`).join("")

/** A handler over `sessionsDir`, and a fetch that sends the cookie and Host unless told otherwise. */
const makeClient = (sessionsDir: string) =>
  Effect.gen(function*() {
    const app = serveApp({
      sessionsDir,
      token: TOKEN,
      allowedHost: hostPolicy("127.0.0.1", 8765),
      pollInterval: "20 millis"
    })
    const { dispose, handler } = HttpEffect.toWebHandlerLayer(app, storeLayerNode)
    yield* Effect.addFinalizer(() => Effect.promise(() => dispose()))
    const get = (
      url: string,
      options: { readonly cookie?: string | null; readonly host?: string; readonly method?: string } = {}
    ) =>
      Effect.promise(async () => {
        const headers = new Headers({ host: options.host ?? HOST })
        const cookie = options.cookie === undefined ? `${TOKEN_COOKIE}=${TOKEN}` : options.cookie
        if (cookie !== null) headers.set("cookie", cookie)
        const response = await handler(
          new Request(`http://${HOST}${url}`, { method: options.method ?? "GET", headers })
        )
        return {
          status: response.status,
          headers: response.headers,
          body: url.includes("/live") ? "" : await response.text(),
          response
        }
      })
    return { get }
  })

const HOSTILE = "<script>globalThis.pwned=1</script><a href=\"javascript:alert(1)\">x</a>" +
  "<img src=x onerror=\"globalThis.pwned=2\">\u001b[31mred\u001b[0m"

const SECRET = "sk-ant-abcdefghijklmnopqrstuvwxyz0123456789"

const hostileSession = (dir: string) =>
  plantSession(dir, "hostile", {
    manifest: { turn_count: 1, event_count: 5 },
    events: jsonl([
      items.turn("h", `${HOSTILE} token ${SECRET}`),
      items.message("m1", `${HOSTILE} and ${"A".repeat(200_000)}`),
      {
        type: "item.completed",
        item: {
          id: "c1",
          type: "command_execution",
          command: HOSTILE,
          aggregated_output: HOSTILE,
          exit_code: 2,
          status: "failed"
        }
      },
      ev.error(HOSTILE),
      ev.completed()
    ])
  })

describe("logbook serve: the guard", () => {
  it.effect("a request without the token is refused with 403, and a wrong token too", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      const client = yield* makeClient(dir)
      assert.strictEqual((yield* client.get("/", { cookie: null })).status, 403)
      assert.strictEqual((yield* client.get("/", { cookie: `${TOKEN_COOKIE}=wrong` })).status, 403)
      assert.strictEqual((yield* client.get("/?token=wrong", { cookie: null })).status, 403)
      assert.strictEqual((yield* client.get("/assets/app.js", { cookie: null })).status, 403)
    }))

  it.effect("the token in the URL sets an HttpOnly SameSite=Strict cookie and redirects to the URL without it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      const client = yield* makeClient(dir)
      const r = yield* client.get(`/search?q=x&token=${TOKEN}`, { cookie: null })
      assert.strictEqual(r.status, 303)
      assert.strictEqual(r.headers.get("location"), "/search?q=x")
      const cookie = r.headers.get("set-cookie") ?? ""
      assert.include(cookie, `${TOKEN_COOKIE}=${TOKEN}`)
      assert.include(cookie, "HttpOnly")
      assert.include(cookie, "SameSite=Strict")
      assert.strictEqual((yield* client.get("/")).status, 200)
    }))

  it.effect("a Host that is not the bound address is refused even with the token (DNS rebinding)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      const client = yield* makeClient(dir)
      assert.strictEqual((yield* client.get("/", { host: "evil.example:8765" })).status, 403)
      assert.strictEqual((yield* client.get("/", { host: "127.0.0.1:9999" })).status, 403)
      assert.strictEqual(
        (yield* client.get(`/?token=${TOKEN}`, { host: "evil.example:8765", cookie: null })).status,
        403
      )
      assert.strictEqual((yield* client.get("/", { host: "localhost:8765" })).status, 200)
    }))

  it("the Host policy of an every-interface bind admits IP literals and localhost, never another name", () => {
    const any = hostPolicy("0.0.0.0", 80)
    assert.isTrue(any("192.168.1.7:80"))
    assert.isTrue(any("[fe80::1]:80"))
    assert.isTrue(any("localhost:80"))
    assert.isFalse(any("attacker.example:80"))
    assert.isFalse(any("192.168.1.7:81"))
    const local = hostPolicy("127.0.0.1", 80)
    assert.isTrue(local("127.0.0.1:80"))
    assert.isFalse(local("10.0.0.1:80"))
  })

  it.effect("only GET is served; no response carries a CORS header; pages carry a strict CSP", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      const client = yield* makeClient(dir)
      const post = yield* client.get("/", { method: "POST" })
      assert.strictEqual(post.status, 405)
      const r = yield* client.get("/")
      assert.isNull(r.headers.get("access-control-allow-origin"))
      assert.include(r.headers.get("content-security-policy") ?? "", "script-src 'self'")
      assert.strictEqual(r.headers.get("x-content-type-options"), "nosniff")
    }))
})

describe("logbook serve: the pages", () => {
  it.effect("the sessions page paginates 50 rows at a time and refuses pages and parameters out of range", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      for (let i = 0; i < 120; i++) {
        const n = String(i).padStart(3, "0")
        plantSession(dir, i % 3 === 0 ? `claude-${n}` : `s${n}`, {
          manifest: {
            updated_at: `2026-01-01T00:${String(Math.floor(i / 60)).padStart(2, "0")}:${
              String(i % 60).padStart(2, "0")
            }+00:00`
          }
        })
      }
      const client = yield* makeClient(dir)
      const rows = (body: string) => body.match(/<tr data-session=/gu)?.length ?? 0
      const first = yield* client.get("/")
      assert.strictEqual(first.status, 200)
      assert.strictEqual(rows(first.body), 50)
      assert.include(first.body, "data-session=\"s119\"")
      assert.include(first.body, "page 1 of 3")
      const last = yield* client.get("/?page=3")
      assert.strictEqual(rows(last.body), 20)
      assert.include(last.body, "data-session=\"claude-000\"")
      assert.strictEqual((yield* client.get("/?page=4")).status, 404)
      for (const bad of ["/?page=0", "/?page=-1", "/?page=abc", "/?sort=bogus", "/?status=failed", "/?agent=x"]) {
        assert.strictEqual((yield* client.get(bad)).status, 400, bad)
      }
      const early = yield* client.get("/?from=2026-01-01&to=2026-01-01&sort=updated&order=asc")
      assert.strictEqual(early.status, 200)
      assert.include(early.body, "120 sessions")
      assert.include((yield* client.get("/?from=2026-01-02")).body, "No sessions match")
      const claude = yield* client.get("/?agent=claude")
      assert.strictEqual(rows(claude.body), 40)
      const byId = yield* client.get("/?sort=id&order=asc&q=s00")
      assert.strictEqual(rows(byId.body), 6)
      assert.isTrue(byId.body.indexOf("s001") < byId.body.indexOf("s002"))
    }))

  it.effect("hostile recorded text is escaped, its ANSI codes dropped, secrets redacted and huge text cut", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      hostileSession(dir)
      const client = yield* makeClient(dir)
      for (const url of ["/s/hostile", "/", "/s/hostile/explain", "/search?q=script", "/usage"]) {
        const r = yield* client.get(url)
        assert.strictEqual(r.status, 200, url)
        assert.notInclude(r.body, "<script>globalThis", url)
        assert.notInclude(r.body, "<img src=x", url)
        assert.notInclude(r.body, "href=\"javascript:", url)
        assert.notInclude(r.body, "\u001b", url)
        assert.notInclude(r.body, SECRET, url)
      }
      const session = yield* client.get("/s/hostile")
      assert.include(session.body, "&lt;script&gt;globalThis.pwned=1&lt;/script&gt;")
      assert.include(session.body, "exit 2")
      assert.include(session.body, "Show the whole event")
      assert.isBelow(session.body.length, 100_000)
      const offset = /\/s\/hostile\/event\/(\d+)/u.exec(session.body)?.[1] ?? "missing"
      const whole = yield* client.get(`/s/hostile/event/${offset}`)
      assert.strictEqual(whole.status, 200)
      assert.isAbove(whole.body.length, 200_000)
      assert.notInclude(whole.body, "<script>globalThis")
    }))

  it.effect("an agent message of bare newlines (as Claude Code writes them) is one muted line, not an empty box", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      plantSession(dir, "blank", {
        manifest: { turn_count: 1, event_count: 4 },
        events: jsonl([
          items.turn("b", "look around"),
          items.message("m1", "\n\n"),
          items.message("m2", "Done."),
          ev.completed()
        ])
      })
      const page = yield* (yield* makeClient(dir)).get("/s/blank")
      assert.strictEqual(page.status, 200)
      assert.strictEqual(page.body.split("(an empty message)").length - 1, 1)
      assert.include(page.body, "Done.")
    }))

  it.effect("unknown sessions, traversal-shaped ids and bad offsets get a 4xx page, never a stack trace", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      hostileSession(dir)
      fs.writeFileSync(path.join(path.dirname(dir), "outside.txt"), "secret")
      const client = yield* makeClient(dir)
      const cases: ReadonlyArray<readonly [string, number]> = [
        ["/s/nope", 404],
        ["/s/nope/explain", 404],
        ["/s/..%2Foutside.txt", 400],
        ["/s/%2e%2e%2fx", 400],
        // A bare `%2e%2e` segment is `..` to the URL parser: it never reaches a route, it resolves to the root.
        ["/s/%2e%2e/%2e%2e/etc/passwd", 404],
        ["/s/.hidden", 400],
        ["/s/a%5Cb", 400],
        ["/s/%E0%A4%A", 400],
        ["/s/hostile?at=-1", 400],
        ["/s/hostile?at=99999999", 400],
        ["/s/hostile?page=7", 404],
        ["/s/hostile?turn=5", 404],
        ["/s/hostile/event/abc", 400],
        ["/s/hostile/event/1", 404],
        ["/s/hostile/live?from=99999999", 400],
        ["/s/hostile/what", 404],
        ["/etc/passwd", 404],
        ["/search?scope=everything", 400]
      ]
      for (const [url, status] of cases) {
        const r = yield* client.get(url)
        assert.strictEqual(r.status, status, url)
        assert.include(r.headers.get("content-type") ?? "", "text/html", url)
        assert.notMatch(r.body, /\bat .*\.ts:\d+|Error: |node_modules/u, url)
      }
    }))

  it.effect("explanation evidence links open the session page holding the cited event, anchored on it", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      plantSession(dir, "ex", {
        events: jsonl([
          items.turn("t", "make the tests pass"),
          items.command("completed", "c1", "npm test", "completed", 0, { task: "t", activity: "verification" }),
          ev.completed()
        ])
      })
      const client = yield* makeClient(dir)
      const report = yield* client.get("/s/ex/explain")
      assert.strictEqual(report.status, 200)
      const links = [...report.body.matchAll(/href="\/s\/ex\?at=(\d+)#ev-(\d+)"/gu)]
      assert.isAbove(links.length, 0)
      for (const [, at, anchor] of links) {
        assert.strictEqual(at, anchor)
        const target = yield* client.get(`/s/ex?at=${at}`)
        assert.strictEqual(target.status, 200)
        assert.include(target.body, `id="ev-${at}"`)
      }
    }))

  it.effect("a search hit links to the exact turn and event of its session", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      plantSession(dir, "found", {
        manifest: { turn_count: 2, event_count: 6 },
        events: jsonl([
          items.turn("a", "first task about apples"),
          ev.msg("apples done"),
          ev.completed(),
          items.turn("b", "second task about zebras"),
          ev.msg("zebras striped", "m2"),
          ev.completed()
        ])
      })
      const client = yield* makeClient(dir)
      const r = yield* client.get("/search/results?q=zebras")
      assert.strictEqual(r.status, 200)
      const link = /href="(\/s\/found\?at=(\d+)#ev-\d+)"/u.exec(r.body)
      assert.isNotNull(link)
      assert.include(r.body, "turn 2")
      const target = yield* client.get(link?.[1] ?? "/")
      assert.include(target.body, `id="ev-${link?.[2]}"`)
      assert.include(target.body, "zebras")
      assert.include((yield* client.get("/search/results?q=")).body, "Type to search")
    }))

  it.effect("the usage page charts tokens per day and agent and totals them per agent", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      const twoTurns = jsonl([items.turn("a", "one"), ev.completed(), items.turn("b", "two"), ev.completed()])
      plantSession(dir, "claude-1", { manifest: { updated_at: "2026-01-02T10:00:00+00:00" }, events: twoTurns })
      plantSession(dir, "claude-2", { manifest: { updated_at: "2026-01-02T11:00:00+00:00" }, events: twoTurns })
      plantSession(dir, "codex-1", { manifest: { updated_at: "2026-01-01T10:00:00+00:00" }, events: twoTurns })
      const client = yield* makeClient(dir)
      const r = yield* client.get("/usage")
      assert.strictEqual(r.status, 200)
      // testkit usage: 1 input + 2 output tokens a turn, two turns a session.
      assert.match(r.body, /<title>claude 2026-01-02: 12 tokens<\/title>/u)
      assert.match(r.body, /<title>codex 2026-01-01: 6 tokens<\/title>/u)
      assert.include(r.body, "<tr><td>claude</td><td class=\"num\">2</td><td class=\"num\">12</td>")
      assert.strictEqual(r.body.match(/class="bar"/gu)?.length, 2)
    }))

  it.live("the live stream sends an event flushed after the page was rendered", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("logbook-serve-")
      const sessionDir = plantSession(dir, "live", { events: jsonl([items.turn("a", "first"), ev.completed()]) })
      const events = path.join(sessionDir, "events.jsonl")
      const client = yield* makeClient(dir)
      const from = fs.statSync(events).size
      const r = yield* client.get(`/s/live/live?from=${from}&turn=2`)
      assert.strictEqual(r.status, 200)
      assert.include(r.headers.get("content-type") ?? "", "text/event-stream")
      fs.appendFileSync(events, jsonl([items.turn("b", "a new <b>turn</b>"), ev.msg("hello live")]))
      const text = yield* Effect.promise(async () => {
        const body = r.response.body
        if (body === null) return ""
        const reader = body.getReader()
        const decoder = new TextDecoder()
        let seen = ""
        while (!seen.includes("hello live")) {
          const chunk = await reader.read()
          if (chunk.done) break
          seen += decoder.decode(chunk.value)
        }
        await reader.cancel()
        return seen
      })
      assert.include(text, "event: ev")
      assert.include(text, "\"turnStart\":true,\"turn\":2")
      assert.include(text, "a new &lt;b&gt;turn&lt;/b&gt;")
      assert.include(text, `id=\\"ev-${from}\\"`)
    }), 60_000)
})
