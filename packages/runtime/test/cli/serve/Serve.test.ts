/**
 * `logbook serve` as a process (the built binary): it prints the URL with its token, a bind
 * beyond loopback prints a warning, the printed URL opens the store while a request without the
 * token is refused, a port in use fails with a message naming it, and Ctrl-C stops it.
 */
import { assert, describe, it } from "@effect/vitest"
import { plantSession } from "@logbook/testkit"
import { Effect } from "effect"
import * as net from "node:net"
import { assertBuilt, eventually, run, runInBackground, sessionsOf, workspace } from "../harness.ts"

const urlIn = (text: string): string | undefined => /http:\/\/\S+\?token=\S+/u.exec(text)?.[0]

describe("logbook serve (binary)", () => {
  it.live(
    "prints the URL with its token; only the token opens the store; --host 0.0.0.0 warns; Ctrl-C stops it",
    () =>
      Effect.gen(function*() {
        assertBuilt()
        const ws = yield* workspace
        plantSession(sessionsOf(ws), "s1")
        const server = yield* runInBackground(["serve", "--port", "0", "--host", "0.0.0.0"], { cwd: ws })
        yield* eventually("the URL on stdout", () => urlIn(server.stdout()) !== undefined, 1500)
        const url = new URL(urlIn(server.stdout()) ?? "")
        assert.strictEqual(url.hostname, "127.0.0.1")
        assert.include(server.stderr(), "warning: listening on 0.0.0.0")
        const without = yield* Effect.promise(() => fetch(`${url.origin}/`))
        assert.strictEqual(without.status, 403)
        const first = yield* Effect.promise(() => fetch(url.href, { redirect: "manual" }))
        assert.strictEqual(first.status, 303)
        const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
        const listing = yield* Effect.promise(() =>
          fetch(`${url.origin}/`, { headers: { cookie } }).then((r) => r.text())
        )
        assert.include(listing, "data-session=\"s1\"")
        const stopped = yield* server.stop("SIGINT")
        assert.notStrictEqual(stopped.code, null, "exited on Ctrl-C rather than being killed")
      }),
    60_000
  )

  it.live("a port in use fails with exit 1 and a message saying what to do", () =>
    Effect.gen(function*() {
      assertBuilt()
      const ws = yield* workspace
      const busy = net.createServer()
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) =>
          busy.listen(0, "127.0.0.1", () => {
            const address = busy.address()
            resolve(typeof address === "object" && address !== null ? address.port : 0)
          })
        )
      )
      yield* Effect.addFinalizer(() => Effect.sync(() => busy.close()))
      const r = yield* run(["serve", "--port", String(port)], { cwd: ws })
      assert.strictEqual(r.code, 1, r.stderr)
      assert.include(r.stderr, `could not listen on 127.0.0.1:${port}`)
      assert.include(r.stderr, "--port")
    }), 60_000)
})
