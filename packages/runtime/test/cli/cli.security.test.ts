/**
 * Issue #34's reproductions, in-process: no exit prints a secret the redaction policy knows
 * (evidence with secret-named keys in five spellings; each text pattern through explain's
 * summary, details, diagram, JSON and HTML and through evidence; facts and search; events and
 * turn on a terminal), derived memory views hold none, and escape sequences planted in a
 * session id, a fact or a turn reach the terminal as visible text in show, sessions, explain,
 * import, facts and search.
 */
import { assert, describe, it } from "@effect/vitest"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { logbook } from "./inProcess.ts"

const context = (goal: string) => ({
  task_id: "task-1",
  turn_id: "turn-1",
  actor_id: "main",
  origin: "user",
  timestamp: "2026-01-01T00:00:00Z",
  goal
})

const usage = { input_tokens: 1, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 1 }

const jsonl = (events: ReadonlyArray<unknown>) => events.map((e) => JSON.stringify(e)).join("\n") + "\n"

const ok = (args: ReadonlyArray<string>, options: { readonly input?: string; readonly terminal?: boolean } = {}) =>
  Effect.map(logbook(args, options), (r) => {
    assert.strictEqual(r.exitCode, 0, r.stderr)
    return r.stdout
  })

/** The byte offset and SHA-256 of the first line of a session's log that contains `marker`. */
const evidenceOf = (sessionsDir: string, session: string, marker: string) => {
  const bytes = fs.readFileSync(path.join(sessionsDir, session, "events.jsonl"))
  let offset = 0
  for (const line of bytes.toString("utf8").split("\n")) {
    const length = Buffer.byteLength(line) + 1
    if (line.includes(marker)) {
      const digest = createHash("sha256").update(bytes.subarray(offset, offset + length)).digest("hex")
      return { offset: String(offset), digest }
    }
    offset += length
  }
  throw new Error(`no line with ${marker}`)
}

const KEY_SECRETS = {
  DB_PASSWORD: "pw-db-0001",
  AWS_SECRET_ACCESS_KEY: "aws-secret-0002",
  GITHUB_TOKEN: "gh-token-0003",
  OPENAI_API_KEY: "openai-key-0004",
  "X-Api-Key": "x-api-key-0005"
}

// Each text pattern of the review and the secret part that must not survive.
const TEXT_SECRETS: ReadonlyArray<readonly [string, string]> = [
  ["PGPASSWORD=pgpw0001 psql -h db", "pgpw0001"],
  ["STRIPE_KEY=stripekey0002 node app.js", "stripekey0002"],
  ["SECRET_KEY_BASE=keybase0003 rails s", "keybase0003"],
  ["echo sk_live_51Hsecretstripe0004", "51Hsecretstripe0004"],
  ["echo hf_abcdefghijklmnopqrstuvwxyz0005AB", "abcdefghijklmnopqrstuvwxyz0005"],
  [
    "curl -H eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.jwtsignature0006 https://api",
    "jwtsignature0006"
  ],
  ["az storage ls --connection-string 'AccountName=a;AccountKey=azurekey0007==;'", "azurekey0007"],
  ["mysql -u root -pmysqlpw0008 shop", "mysqlpw0008"],
  ["curl -u admin:curlpw0009 https://example.com", "curlpw0009"],
  ["sshpass -p 'sshpw0010' ssh host", "sshpw0010"],
  ["deploy --password hunter0011", "hunter0011"]
]

const OSC52 = "\u001b]52;c;aGk=\u0007"
const OSC8 = "\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\"
const CLEAR = "\u001b[2J\u001b[3J\u001b[H"

/** Asserts that output carries no raw escape or bell, and shows the planted ESC visibly. */
const assertInert = (label: string, output: string) => {
  assert.notMatch(output, /[\u0007\u001b\u009b]/u, `${label} printed a raw control character`)
  assert.include(output, "\\x1b", `${label} does not show the planted escape`)
}

describe("no exit leaks a secret", () => {
  it.effect("evidence hides the values of secret-named keys in five spellings", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("security-evidence")
      yield* ok(["--sessions-dir", dir, "append", "s"], {
        input: jsonl([
          { type: "turn.started" },
          {
            type: "item.completed",
            item: {
              id: "t1",
              type: "tool_invocation",
              tool_name: "deploy",
              arguments: { env: KEY_SECRETS, note: "marker-line" },
              status: "completed"
            }
          },
          { type: "turn.completed", usage }
        ])
      })
      const { digest, offset } = evidenceOf(dir, "s", "marker-line")
      for (const extra of [[], ["--json"]]) {
        const out = yield* ok(["--sessions-dir", dir, "evidence", "s", offset, digest, ...extra])
        for (const [key, value] of Object.entries(KEY_SECRETS)) {
          assert.include(out, key)
          assert.notInclude(out, value, `${key} leaked with ${extra.join(" ") || "text"}`)
        }
        assert.include(out, "[REDACTED]")
      }
    }), 60_000)

  it.effect(
    "each text pattern is redacted in explain's summary, details, diagram, JSON and HTML and in evidence",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("security-explain")
        yield* ok(["--sessions-dir", dir, "append", "s"], {
          input: jsonl([
            { type: "turn.started", context: context(`Deploy with ${TEXT_SECRETS[0]?.[0]}`) },
            ...TEXT_SECRETS.map(([command], i) => ({
              type: "item.completed",
              item: {
                id: `c${i}`,
                type: "command_execution",
                command,
                aggregated_output: `ran ${command}`,
                exit_code: 1,
                status: "failed"
              }
            })),
            ...TEXT_SECRETS.map(([text], i) => ({
              type: "item.completed",
              item: { id: `d${i}`, type: "decision", summary: `chose ${text}`, rationale: `because ${text}` }
            })),
            { type: "turn.completed", usage }
          ])
        })
        const html = path.join(dir, "report.html")
        const outputs = {
          summary: yield* ok(["--sessions-dir", dir, "explain", "s"]),
          details: yield* ok(["--sessions-dir", dir, "explain", "s", "--details"]),
          diagram: yield* ok(["--sessions-dir", dir, "explain", "s", "--diagram"]),
          json: yield* ok(["--sessions-dir", dir, "explain", "s", "--json"])
        }
        yield* ok(["--sessions-dir", dir, "explain", "s", "--html", html])
        const all = { ...outputs, html: fs.readFileSync(html, "utf8") }
        for (const [secretText, secret] of TEXT_SECRETS) {
          const { digest, offset } = evidenceOf(dir, "s", secret)
          const evidence = yield* ok(["--sessions-dir", dir, "evidence", "s", offset, digest])
          for (const [name, out] of Object.entries({ ...all, evidence })) {
            assert.notInclude(out, secret, `${name} leaked ${JSON.stringify(secretText)}`)
          }
        }
        // Not vacuous: the details and the report show each redacted command and decision.
        assert.isAtLeast(all.details.split("[REDACTED]").length - 1, TEXT_SECRETS.length)
        assert.isAtLeast(all.html.split("[REDACTED]").length - 1, TEXT_SECRETS.length)
      }),
    60_000
  )

  it.effect(
    "facts, search, derived memory views and events on a terminal hold no secret",
    () =>
      Effect.gen(function*() {
        const dir = yield* tempDir("security-facts")
        const secretFacts = TEXT_SECRETS.map(([text], i) => `deploy step ${i}: ${text}`)
        yield* ok(["--sessions-dir", dir, "append", "host"], {
          input: jsonl([{ type: "turn.started" }, { type: "turn.completed", usage }])
        })
        yield* ok(["--sessions-dir", dir, "memory", "write", "host"], {
          input: JSON.stringify({
            summary: "s",
            task_summary: null,
            spec_summary: null,
            evaluation_summary: null,
            touched_files: [],
            grounded_facts: secretFacts.map((fact) => ({ fact, source: "host" })),
            history_artifact_path: null,
            generated_at: "2026-01-01T00:00:00Z"
          })
        })
        yield* ok(["--sessions-dir", dir, "append", "derived"], {
          input: jsonl([
            { type: "turn.started" },
            ...TEXT_SECRETS.map(([text], i) => ({
              type: "item.completed",
              item: { id: `m${i}`, type: "agent_message", text: `deploy step ${i}: ${text}` }
            })),
            { type: "turn.completed", usage }
          ])
        })
        yield* ok(["--sessions-dir", dir, "memory", "derive", "derived"])
        const view = fs.readFileSync(path.join(dir, "derived", "derived", "memory.json"), "utf8")
        const outputs = {
          view,
          facts: yield* ok(["--sessions-dir", dir, "facts"]),
          factsJson: yield* ok(["--sessions-dir", dir, "facts", "--json"]),
          search: yield* ok(["--sessions-dir", dir, "search", "deploy step", "--max", "50", "--now", "0"]),
          searchJson: yield* ok([
            "--sessions-dir",
            dir,
            "search",
            "deploy step",
            "--max",
            "50",
            "--json",
            "--now",
            "0"
          ]),
          history: yield* ok([
            "--sessions-dir",
            dir,
            "search",
            "deploy",
            "--in",
            "history",
            "--max",
            "50",
            "--now",
            "0"
          ]),
          eventsTerminal: yield* ok(["--sessions-dir", dir, "events", "derived"], { terminal: true }),
          turnTerminal: yield* ok(["--sessions-dir", dir, "turn", "derived", "1"], { terminal: true })
        }
        for (const [, secret] of TEXT_SECRETS) {
          for (const [name, out] of Object.entries(outputs)) assert.notInclude(out, secret, `${name} leaked ${secret}`)
        }
        assert.include(outputs.facts, "[REDACTED]")
        assert.include(outputs.search, "[REDACTED]")
        assert.include(outputs.eventsTerminal, "[REDACTED]")
        for (const file of fs.readdirSync(dir).filter((name) => name.startsWith(".logbook-search"))) {
          const snapshot = fs.readFileSync(path.join(dir, file), "latin1")
          for (const [, secret] of TEXT_SECRETS) assert.notInclude(snapshot, secret, `${file} holds ${secret}`)
        }
        // On a terminal each line is still one JSON object, keys in the recorded order.
        const offsets = yield* ok(["--sessions-dir", dir, "events", "derived", "--offsets"], { terminal: true })
        const lines = offsets.trim().split("\n").map((l) => JSON.parse(l))
        assert.deepStrictEqual(lines.map((l) => Object.keys(l)), lines.map(() => ["offset", "event"]))
        assert.deepStrictEqual(Object.keys(lines[1].event.item), ["id", "type", "text"])
        assert.notInclude(offsets, "pgpw0001")
        // Piped, or with --raw, events are as recorded (the canonical log's content).
        const piped = yield* ok(["--sessions-dir", dir, "events", "derived"])
        const raw = yield* ok(["--sessions-dir", dir, "events", "derived", "--raw"], { terminal: true })
        for (const out of [piped, raw]) assert.include(out, "pgpw0001")
        assert.include(fs.readFileSync(path.join(dir, "derived", "events.jsonl"), "utf8"), "pgpw0001")
      }),
    60_000
  )
})

describe("untrusted text never drives the terminal", () => {
  it.effect("escape sequences in a session id, a fact and a turn are shown as text", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("security-escapes")
      const session = `evil${OSC52}${CLEAR}`
      yield* ok(["--sessions-dir", dir, "append", session], {
        input: jsonl([
          { type: "turn.started", context: context(`goal ${OSC8} ${CLEAR}`) },
          { type: "item.completed", item: { id: "m", type: "agent_message", text: `payload ${OSC8} ${OSC52}` } },
          { type: "turn.completed", usage }
        ])
      })
      yield* ok(["--sessions-dir", dir, "memory", "derive", session])
      const runs = {
        show: yield* ok(["--sessions-dir", dir, "show", session]),
        sessions: yield* ok(["--sessions-dir", dir, "sessions"]),
        explain: yield* ok(["--sessions-dir", dir, "explain", session]),
        details: yield* ok(["--sessions-dir", dir, "explain", session, "--details"]),
        facts: yield* ok(["--sessions-dir", dir, "facts"]),
        search: yield* ok(["--sessions-dir", dir, "search", "payload", "--now", "0"], { terminal: true }),
        history: yield* ok(["--sessions-dir", dir, "search", "payload", "--in", "history", "--now", "0"])
      }
      for (const [name, out] of Object.entries(runs)) {
        // `sessions` lists directory names, which `append` already made safe; the rest show the recorded text.
        if (name === "sessions") assert.notMatch(out, /[\u0007\u001b\u009b]/u)
        // On a terminal `search` bolds the matched words: Logbook's own escapes, the only ones allowed.
        else assertInert(name, name === "search" ? out.replace(/\u001b\[(?:1|22)m/gu, "") : out)
      }
      assert.include(runs.search, "\u001b[1mpayload\u001b[22m")
      // --json stays JSON: escaped, and the same text when parsed.
      const json = yield* ok(["--sessions-dir", dir, "facts", "--json"])
      assert.notMatch(json, /[\u0007\u001b\u009b]/u)
      const name = JSON.parse(json)[0].session_id
      const view = JSON.parse(fs.readFileSync(path.join(dir, name, "derived", "memory.json"), "utf8"))
      assert.include(JSON.stringify(view), "\\u001b", "the derived view keeps the recorded text (escaped by JSON)")
      assert.deepStrictEqual(
        JSON.parse(json).map((f: { fact: string }) => f.fact),
        view.grounded_facts.map((f: { fact: string }) => f.fact)
      )
    }), 60_000)

  it.effect("import shows a planted thread id as text", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("security-import")
      const threadId = `t${OSC52}${CLEAR}`
      const input = jsonl([
        { type: "thread.started", thread_id: threadId },
        { type: "turn.started" },
        { type: "item.completed", item: { id: "m", type: "agent_message", text: `hi ${OSC8}` } },
        { type: "turn.completed", usage }
      ])
      const out = yield* ok(["--sessions-dir", dir, "import", "exec", "-"], { input })
      assertInert("import", out)
    }), 60_000)
})
