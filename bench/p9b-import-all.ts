/**
 * P9b — `import all` over a whole machine's worth of sessions (issue 26): a generated home
 * directory of ≥ 1 GB (100 MB with `--quick`) mixing the formats — Codex rollouts below
 * `.codex/sessions/YYYY/MM/DD/`, Claude Code transcripts below `.claude/projects/<cwd>/`, Gemini
 * CLI JSON and JSONL sessions below `.gemini/tmp/<hash>/chats/` — made from the real fixtures of
 * the importer tests, each copy under its own session id, plus a few large rollouts (the 0.40
 * file's body repeated). Measured: `logbook import all --json` (`packages/runtime/bin/logbook.js`,
 * as `npm run build` leaves it) run as its own process with that tree as `HOME` — one
 * `importSessions` per agent over its default locations — timed by wall clock as MB/s of source
 * bytes, with the process's peak RSS from `/usr/bin/time` (goal < 200 MiB: memory must not grow
 * with the size of the home directory).
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import type { BenchContext } from "./lib/context.ts"
import type { Outcome } from "./lib/measure.ts"
import { mbps, ms, size } from "./lib/measure.ts"

const FIXTURES = Path.join(import.meta.dirname, "..", "packages", "projections", "test", "fixtures", "realdata")

interface Template {
  readonly agent: "codex" | "claude" | "gemini"
  readonly text: string
  /** The session id the text holds, replaced in each copy. */
  readonly id: string
  readonly ext: string
}

const template = (agent: Template["agent"], file: string, id: string): Template => ({
  agent,
  text: Fs.readFileSync(Path.join(FIXTURES, file), "utf8"),
  id,
  ext: Path.extname(file)
})

const templates = (): ReadonlyArray<Template> => [
  template(
    "codex",
    "codex-rollout/agentcmd__0.40.0__rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl",
    "019982b8-3422-79e0-8b3b-05abaf4f3c3e"
  ),
  template(
    "codex",
    "codex-rollout/localpush-sanitized__0.104.0-alpha.1__rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    "019c8a70-dda7-7f33-98ea-f30553347322"
  ),
  template(
    "claude",
    "claude-code/agentcmd__2.0.26__session-8a2518dd__full-session-two.jsonl",
    "8a2518dd-ff41-4d5f-83a1-407b03598cc6"
  ),
  template(
    "claude",
    "claude-code/entire-cli__2.0.76__ckpt-a6e4c2a0fbd1__compact_boundary.jsonl",
    "198393f2-22db-477b-ac77-1825bea883ae"
  ),
  template("gemini", "gemini-cli/agentcmd__session-2025-10-27T19-55-981c87cb.json", "981c87cb"),
  template("gemini", "gemini-cli/agent-sessions__stage0_gemini_jsonl_v040.jsonl", "")
]

/** A uuid-shaped id for copy `n` (deterministic: the same tree on every run). */
const idOf = (n: number): string => {
  const hex = n.toString(16).padStart(12, "0")
  return `00000000-0000-4000-8000-${hex}`
}

/** The text of a copy under session id `id`. */
const copyOf = (t: Template, id: string): string => {
  if (t.id.length > 0) return t.text.replaceAll(t.id, id)
  // A template whose id is not known up front: its header's sessionId.
  return t.text.replace(/"sessionId":"[^"]*"/u, `"sessionId":"${id}"`)
}

/** Writes the home directory; returns its byte count and the files per agent. */
const writeHome = (home: string, bytes: number) => {
  const all = templates()
  const large = all[0]
  if (large === undefined) throw new Error("no templates")
  const codexBody = large.text.split("\n").slice(1).join("\n")
  let written = 0
  let n = 0
  const files: Record<Template["agent"], number> = { codex: 0, claude: 0, gemini: 0 }
  const write = (agent: Template["agent"], path: string, text: string) => {
    Fs.mkdirSync(Path.dirname(path), { recursive: true })
    Fs.writeFileSync(path, text)
    written += Buffer.byteLength(text)
    files[agent]++
  }
  while (written < bytes) {
    for (const t of all) {
      const id = idOf(n++)
      const text = copyOf(t, id)
      const day = String(1 + (n % 28)).padStart(2, "0")
      if (t.agent === "codex") {
        write(
          "codex",
          Path.join(home, ".codex", "sessions", "2026", "03", day, `rollout-2026-03-${day}T10-00-00-${id}.jsonl`),
          text
        )
      } else if (t.agent === "claude") {
        write("claude", Path.join(home, ".claude", "projects", `-work-p${n % 40}`, `${id}.jsonl`), text)
      } else {
        write("gemini", Path.join(home, ".gemini", "tmp", `h${n % 20}`, "chats", `session-${id}${t.ext}`), text)
      }
    }
    // Every 200 copies one large rollout (about 8 MB), so single files of many MB are in the mix too.
    if (n % 200 < all.length) {
      const id = idOf(n++)
      const head = copyOf(large, id).split("\n")[0] ?? ""
      write(
        "codex",
        Path.join(home, ".codex", "sessions", "2026", "04", "01", `rollout-2026-04-01T10-00-00-${id}.jsonl`),
        `${head}\n${codexBody.repeat(40)}`
      )
    }
  }
  return { bytes: written, files }
}

const BIN = Path.join(import.meta.dirname, "..", "packages", "runtime", "bin", "logbook.js")
const TIME = "/usr/bin/time"

/** Runs P9b and prints its figures. */
export const runP9b = async (ctx: BenchContext): Promise<Outcome> => {
  const home = Path.join(ctx.root, "p9b-home")
  const target = ctx.profile.quick ? 100e6 : 1.05e9
  const tree = writeHome(home, target)
  const sessionsDir = Path.join(ctx.root, "p9b-sessions")
  Fs.rmSync(sessionsDir, { recursive: true, force: true })
  if (!Fs.existsSync(TIME)) throw new Error(`P9b needs ${TIME} for the peak RSS of the import process`)
  // `logbook import all` as a user runs it, with the generated tree as its home: the process does
  // nothing but the imports, so its peak RSS (from `/usr/bin/time`) is theirs.
  const rssFile = Path.join(ctx.root, "p9b-rss.txt")
  const argv = [process.execPath, BIN, "--sessions-dir", sessionsDir, "import", "all", "--json", "--allow-empty"]
  const env = { ...process.env, HOME: home, CODEX_HOME: Path.join(home, ".codex") }
  const t0 = performance.now()
  const child = spawnSync(TIME, ["-o", rssFile, "-f", "%M", ...argv], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 1 << 28
  })
  const total = performance.now() - t0
  if (child.status !== 0) {
    throw new Error(`P9b: logbook import all exited ${child.status}: ${child.stderr.toString().slice(-2000)}`)
  }
  const report: { sources: ReadonlyArray<unknown>; sources_failed: number } = JSON.parse(child.stdout.toString())
  if (report.sources_failed > 0) throw new Error(`${report.sources_failed} sources failed`)
  const maxRssKb = Number(Fs.readFileSync(rssFile, "utf8").trim().split("\n").pop())
  const mib = maxRssKb / 1024
  console.log(
    `P9b import all: ${
      size(tree.bytes)
    } in ${report.sources.length} files (codex ${tree.files.codex}, claude ${tree.files.claude}, ` +
      `gemini ${tree.files.gemini})`
  )
  console.log(
    `  logbook import all  ${ms(total)}  ${mbps(tree.bytes, total)}; peak RSS ${mib.toFixed(0)} MiB (goal < 200 MiB)`
  )
  const rate = tree.bytes / 1e6 / (total / 1000)
  return {
    id: "P9b",
    value: rate,
    text: `${rate.toFixed(1)} MB/s, peak RSS ${mib.toFixed(0)} MiB`,
    goal: "peak RSS < 200 MiB",
    met: mib < 200
  }
}
