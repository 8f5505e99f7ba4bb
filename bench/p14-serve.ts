/**
 * P14 — `logbook serve` (docs/serve.md; goals on a store of 20 000 sessions: server time p50 of
 * the Sessions page ≤ 150 ms and of a search request ≤ 50 ms, peak RSS of the server < 200 MiB).
 * Store: 20 000 generated sessions (2 000 with `--quick`), each a manifest and a two-turn log
 * (prompt, agent message, command, usage) written directly in the canonical encoding. The server
 * is the real binary (`bin/logbook.js serve --port 0`) in its own process; requests come over
 * loopback HTTP with the token cookie, one at a time, so the time measured is the server's
 * answer plus one loopback round trip. After one warm-up of each (the first search builds the
 * index), the Sessions page (page 1, newest first, with the row facts of its 50 rows) and a
 * history search (`/search/results`) alternate. Peak RSS is the server's `VmHWM` (Linux).
 */
import { encodeLine } from "@logbook/domain"
import type { ThreadEvent } from "@logbook/domain"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import type { Outcome } from "./lib/measure.ts"
import { median, ms, note } from "./lib/measure.ts"
import { makeRng } from "./lib/rng.ts"

const BIN = Path.join(import.meta.dirname, "..", "packages", "runtime", "bin", "logbook.js")

const WORDS = [
  "retry",
  "backoff",
  "parser",
  "schema",
  "cache",
  "index",
  "migration",
  "socket",
  "timeout",
  "render",
  "router",
  "config",
  "logger",
  "bundle",
  "worker",
  "queue",
  "token",
  "session",
  "export",
  "import",
  "deploy",
  "branch",
  "commit",
  "review",
  "fixture",
  "snapshot",
  "stream",
  "buffer",
  "encoder",
  "layout"
]

const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString().replace("Z", "+00:00")

/** Writes `count` two-turn sessions below `dir` (0700 directories, 0600 files). */
export const generate = (dir: string, count: number): void => {
  const rng = makeRng(14)
  const word = () => WORDS[Math.floor(rng.next() * WORDS.length)] ?? "retry"
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  for (let s = 0; s < count; s++) {
    const id = `p14-${String(s).padStart(5, "0")}`
    const events: Array<ThreadEvent> = []
    for (let t = 0; t < 2; t++) {
      const goal = `fix the ${word()} ${word()} in the ${word()} module`
      events.push(
        {
          type: "turn.started",
          context: {
            task_id: `task-${t}`,
            turn_id: `turn-${t}`,
            actor_id: "agent",
            origin: "user",
            timestamp: at(s),
            goal
          }
        },
        {
          type: "item.completed",
          item: { id: `m${t}`, type: "agent_message", text: `looked at the ${word()} and the ${word()}` }
        },
        {
          type: "item.completed",
          item: {
            id: `c${t}`,
            type: "command_execution",
            command: `npm test -- ${word()}`,
            aggregated_output: "ok",
            exit_code: 0,
            status: "completed"
          }
        },
        {
          type: "turn.completed",
          usage: { input_tokens: 1200, cached_input_tokens: 300, cache_creation_tokens: 0, output_tokens: 400 }
        }
      )
    }
    const log = events.map((e) => `${encodeLine(e)}\n`).join("")
    const sessionDir = Path.join(dir, id)
    Fs.mkdirSync(sessionDir, { mode: 0o700 })
    Fs.writeFileSync(Path.join(sessionDir, "events.jsonl"), log, { mode: 0o600 })
    Fs.writeFileSync(
      Path.join(sessionDir, "manifest.json"),
      JSON.stringify({
        session_id: id,
        schema_version: 1,
        created_at: at(s),
        updated_at: at(s),
        turn_count: 2,
        event_count: events.length,
        status: "completed",
        in_turn: false,
        persisted_file_len: Buffer.byteLength(log)
      }),
      { mode: 0o600 }
    )
  }
}

const peakRssKb = (pid: number): number | undefined => {
  const status = Fs.existsSync(`/proc/${pid}/status`) ? Fs.readFileSync(`/proc/${pid}/status`, "utf8") : ""
  const kb = /VmHWM:\s+(\d+) kB/u.exec(status)?.[1]
  return kb === undefined ? undefined : Number(kb)
}

const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN
}

/** Runs P14 and prints its percentiles. */
export const runP14 = async (ctx: BenchContext): Promise<Outcome> => {
  const sessions = ctx.profile.quick ? 2_000 : 20_000
  const rounds = ctx.profile.quick ? 40 : 150
  const dir = Path.join(ctx.root, "p14")
  const t0 = performance.now()
  generate(dir, sessions)
  note(`P14 generated ${sessions} sessions in ${ms(performance.now() - t0)}`)
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== "LOGBOOK_SESSIONS_DIR") env[k] = v
  const child = spawn(process.execPath, [BIN, "--sessions-dir", dir, "serve", "--port", "0"], {
    env,
    stdio: ["ignore", "pipe", "inherit"]
  })
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = ""
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString()
        const found = /http:\/\/\S+token=\S+/u.exec(out)?.[0]
        if (found !== undefined) resolve(found)
      })
      child.on("exit", (code) => reject(new Error(`logbook serve exited with ${code}`)))
    })
    const parsed = new URL(url)
    const cookie = `logbook_token=${parsed.searchParams.get("token") ?? ""}`
    const get = async (path: string): Promise<number> => {
      const start = performance.now()
      const response = await fetch(`${parsed.origin}${path}`, { headers: { cookie } })
      const body = await response.text()
      const took = performance.now() - start
      if (response.status !== 200 || body.length === 0) throw new Error(`GET ${path}: ${response.status}`)
      return took
    }
    const page = "/"
    const search = "/search/results?q=retry+backoff&scope=history"
    const coldPage = await get(page)
    const coldSearch = await get(search)
    const pages: Array<number> = []
    const searches: Array<number> = []
    for (let i = 0; i < rounds; i++) {
      pages.push(await get(i % 2 === 0 ? page : "/?page=7"))
      searches.push(
        await get(i % 3 === 0 ? search : `/search/results?q=${WORDS[i % WORDS.length] ?? "retry"}&scope=history`)
      )
    }
    const rssKb = child.pid === undefined ? undefined : peakRssKb(child.pid)
    const rssMib = rssKb === undefined ? Number.NaN : rssKb / 1024
    const pageP50 = median(pages)
    const searchP50 = median(searches)
    console.log(`P14 logbook serve: ${sessions} sessions, ${rounds} alternating rounds over loopback HTTP`)
    console.log(`  cold: first sessions page ${ms(coldPage)}, first search (builds the index) ${ms(coldSearch)}`)
    console.log(`  sessions page p50 ${ms(pageP50)}  p99 ${ms(percentile(pages, 99))}`)
    console.log(`  search        p50 ${ms(searchP50)}  p99 ${ms(percentile(searches, 99))}`)
    console.log(`  server peak RSS ${Number.isNaN(rssMib) ? "n/a (no /proc)" : `${rssMib.toFixed(0)} MiB`}`)
    const met = pageP50 <= 150 && searchP50 <= 50 && (Number.isNaN(rssMib) || rssMib < 200)
    return {
      id: "P14",
      value: pageP50,
      text: `page p50 ${ms(pageP50)} p99 ${ms(percentile(pages, 99))}, search p50 ${ms(searchP50)} p99 ${
        ms(percentile(searches, 99))
      }, peak ${Number.isNaN(rssMib) ? "n/a" : `${rssMib.toFixed(0)} MiB`} (${sessions} sessions)`,
      goal: "page p50 ≤ 150 ms, search p50 ≤ 50 ms, < 200 MiB at 20 000 sessions",
      met
    }
  } finally {
    child.kill("SIGINT")
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}
