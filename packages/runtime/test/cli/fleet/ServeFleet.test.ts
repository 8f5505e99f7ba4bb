/**
 * `logbook serve --db`: the web app over a fleet, in process through a Web `Request` handler,
 * against the same app over the store that was replicated. A store of real imported sessions is
 * replicated into the emptied test fleet; the Sessions, Session (every turns page), Explanation,
 * Event, Search and Usage pages must be the same HTML from both (the store's live hook aside: a
 * fleet has no writer to follow), and an unknown session, a bad offset and the live view are
 * 4xx pages.
 */
import { assert, describe, it } from "@effect/vitest"
import { fleetTestTarget, resetFleetDatabase, tempDir } from "@logbook/testkit"
import { Effect, Redacted } from "effect"
import { HttpEffect } from "effect/http"
import * as fs from "node:fs"
import * as path from "node:path"
import { hostPolicy, serveApp, TOKEN_COOKIE } from "../../../src/serve/index.ts"
import { fleetReader } from "../../../src/serve/ServeFleet.ts"
import { storeLayerNode } from "../../../src/SessionMemory.ts"
import { importRealSessions } from "../../mcp/harness.ts"
import { runFleetCli, withDb } from "./support/fleetCli.ts"

const TOKEN = "test-token-0123456789abcdefghijklmnopqrstuv"
const HOST = "127.0.0.1:8765"

const run = runFleetCli

/** A GET through `app`'s Web handler, with the run's cookie and Host. */
const client = (app: ReturnType<typeof serveApp>) =>
  Effect.gen(function*() {
    const { dispose, handler } = HttpEffect.toWebHandlerLayer(app, storeLayerNode)
    yield* Effect.addFinalizer(() => Effect.promise(() => dispose()))
    return (url: string) =>
      Effect.promise(async () => {
        const headers = new Headers({ host: HOST, cookie: `${TOKEN_COOKIE}=${TOKEN}` })
        const response = await handler(new Request(`http://${HOST}${url}`, { headers }))
        return { status: response.status, body: url.includes("/live") ? "" : await response.text() }
      })
  })

/** The page without the store's live hook (a fleet has none). */
const withoutLive = (html: string) => html.replace(/<div id="live"[^>]*>.*?<\/div>/su, "")

const setUp = Effect.gen(function*() {
  const base = yield* tempDir("serve-fleet")
  const store = path.join(base, "store")
  yield* importRealSessions(store)
  const sessions = fs.readdirSync(store).filter((n) => !n.startsWith(".")).sort()
  yield* withDb(resetFleetDatabase)
  const target = yield* fleetTestTarget
  const replicated = yield* run(["--sessions-dir", store, "replicate", "--to", Redacted.value(target.url)])
  assert.strictEqual(replicated.exitCode, 0, replicated.stderr)
  const config = { sessionsDir: store, token: TOKEN, allowedHost: hostPolicy("127.0.0.1", 8765) }
  const local = yield* client(serveApp(config))
  const fleet = yield* client(serveApp({ ...config, reader: yield* fleetReader(target) }))
  const same = (url: string) =>
    Effect.gen(function*() {
      const mine = yield* local(url)
      const theirs = yield* fleet(url)
      assert.strictEqual(theirs.status, mine.status, url)
      assert.strictEqual(withoutLive(theirs.body), withoutLive(mine.body), url)
      return theirs
    })
  return { sessions, fleet, same }
})

describe("logbook serve --db", () => {
  it.live("renders every page of a fleet as the store it was replicated from", () =>
    Effect.scoped(Effect.gen(function*() {
      const { same, sessions } = yield* setUp
      const listing = yield* same("/")
      assert.strictEqual(listing.status, 200)
      for (const session of sessions) assert.include(listing.body, session)
      yield* same("/?sort=turns&order=asc")
      yield* same("/usage")
      for (const q of ["test", "file", "readme"]) {
        yield* same(`/search/results?q=${q}&scope=history`)
        yield* same(`/search/results?q=${q}&scope=facts`)
      }
      let events = 0
      for (const session of sessions) {
        const page = yield* same(`/s/${encodeURIComponent(session)}`)
        assert.strictEqual(page.status, 200)
        yield* same(`/s/${encodeURIComponent(session)}/explain`)
        for (const [, offset] of [...page.body.matchAll(/id="ev-(\d+)"/gu)].slice(0, 5)) {
          const event = yield* same(`/s/${encodeURIComponent(session)}/event/${offset}`)
          assert.strictEqual(event.status, 200)
          events++
        }
      }
      assert.isAbove(events, 5)
    })))

  it.live("answers an unknown session, a bad offset and the live view with 4xx pages", () =>
    Effect.scoped(Effect.gen(function*() {
      const { fleet, sessions } = yield* setUp
      const session = encodeURIComponent(sessions[0] ?? "")
      assert.strictEqual((yield* fleet("/s/no-such-session")).status, 404)
      assert.strictEqual((yield* fleet(`/s/${session}/event/1`)).status, 404)
      assert.strictEqual((yield* fleet(`/s/${session}?at=999999999`)).status, 400)
      assert.strictEqual((yield* fleet(`/s/${session}/live`)).status, 404)
      assert.strictEqual((yield* fleet("/")).status, 200)
    })))
})
