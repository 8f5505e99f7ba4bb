/**
 * The HTML report of a real imported session (a Claude Code transcript from the fixtures) in a
 * real headless Chromium at a phone's width: every prompt and every command of the source is in
 * the transcript, nothing is wider than the screen, an evidence link of a check lands on the
 * transcript entry that records it, and no request leaves the page. A screenshot of the
 * transcript goes to `test-output/` for a person (`docs/explain-transcript.png` is one).
 *
 * The browser is `LOGBOOK_CHROMIUM` or `/usr/bin/chromium`; without it the suite is skipped
 * with a note, except under `CI=true`, where a missing browser fails the run.
 */
import { assert, describe, it } from "@effect/vitest"
import { claudeText, isClaudePrompt } from "@logbook/domain"
import { tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { chromium } from "playwright-core"
import { logbook } from "../cli/inProcess.ts"

const executable = process.env.LOGBOOK_CHROMIUM ?? "/usr/bin/chromium"
const available = fs.existsSync(executable)
const required = process.env.CI === "true"
const OUTPUT = path.resolve(import.meta.dirname, "../../../../test-output")
const fixture = path.resolve(
  import.meta.dirname,
  "../../../projections/test/fixtures/realdata/claude-code/entire-cli__2.0.76__ckpt-a6e4c2a0fbd1__compact_boundary.jsonl"
)

type Json = Record<string, unknown>
const asObj = (v: unknown): Json => typeof v === "object" && v !== null && !Array.isArray(v) ? v as Json : {}

const records: Array<Json> = fs.readFileSync(fixture, "utf8").split("\n").filter((l) => l.trim().length > 0).map((l) =>
  JSON.parse(l)
)
const prompts = records.filter(isClaudePrompt).map((r) => claudeText(asObj(r["message"])["content"]))
const commands = records.flatMap((r) => {
  const content = asObj(r["message"])["content"]
  return (Array.isArray(content) ? content : []).flatMap((b: Json) =>
    b["type"] === "tool_use" && b["name"] === "Bash" ? [String(asObj(b["input"])["command"])] : []
  )
})

interface Seen {
  readonly requests: ReadonlyArray<string>
  readonly scrollWidth: number
  readonly prompts: ReadonlyArray<string>
  readonly commands: ReadonlyArray<string>
  readonly targetKind: string | null
}

const open = (file: string, screenshot: string) =>
  Effect.gen(function*() {
    const profile = yield* tempDir("logbook-chromium-")
    return yield* Effect.acquireUseRelease(
      Effect.tryPromise(() =>
        chromium.launchPersistentContext(profile, {
          executablePath: executable,
          headless: true,
          args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
        })
      ),
      (context) =>
        Effect.tryPromise(async (): Promise<Seen> => {
          const requests: Array<string> = []
          context.on("request", (r) => requests.push(r.url()))
          const page = context.pages()[0] ?? (await context.newPage())
          await page.setViewportSize({ width: 390, height: 844 })
          await page.goto(pathToFileURL(file).href, { waitUntil: "load" })
          const scrollWidth = await page.$eval("html", (e) => e.scrollWidth)
          const shownPrompts = await page.$$eval("[data-kind=prompt]", (els) => els.map((e) => e.textContent ?? ""))
          const shownCommands = await page.$$eval(
            "[data-kind=command] > code",
            (els) => els.map((e) => e.textContent ?? "")
          )
          // Page coordinates: taken at the top, before the click below scrolls.
          const transcript = await page.locator("#transcript").boundingBox()
          if (transcript !== null) {
            await page.screenshot({
              path: screenshot,
              fullPage: true,
              clip: { x: 0, y: transcript.y, width: 390, height: Math.min(transcript.height, 2200) }
            })
          }
          await page.click("#verification a.ev")
          const targets = await page.$$eval(
            ":target",
            (els) => els.map((e) => e.closest("[data-kind]")?.getAttribute("data-kind") ?? null)
          )
          const targetKind = targets[0] ?? null
          return { requests, scrollWidth, prompts: shownPrompts, commands: shownCommands, targetKind }
        }),
      (context) => Effect.promise(() => context.close())
    )
  })

if (!available && !required) {
  console.warn(`transcript report browser test skipped: no Chromium at ${executable} (set LOGBOOK_CHROMIUM)`)
  describe.skip(`HTML transcript in Chromium (skipped: no browser at ${executable})`, () => {
    it("renders", () => undefined)
  })
} else {
  describe("HTML transcript of a real session in Chromium", () => {
    it.effect(
      "shows every prompt and command on a phone's width; evidence links land on their entry",
      () =>
        Effect.gen(function*() {
          const ws = yield* tempDir("logbook-transcript-")
          const imported = yield* logbook(["--workspace", ws, "import", "claude", fixture])
          assert.strictEqual(imported.exitCode, 0, imported.stderr)
          const session = fs.readdirSync(path.join(ws, ".logbook", "sessions")).find((n) => n.startsWith("claude-"))
          assert.isDefined(session)
          const file = path.join(ws, "report.html")
          const r = yield* logbook(["--workspace", ws, "explain", session ?? "", "--scope", "session", "--html", file])
          assert.strictEqual(r.exitCode, 0, r.stderr)
          fs.mkdirSync(OUTPUT, { recursive: true })
          const seen = yield* open(file, path.join(OUTPUT, "explain-transcript.png"))
          assert.deepStrictEqual(seen.requests, [pathToFileURL(file).href])
          assert.isAtMost(seen.scrollWidth, 390)
          assert.deepStrictEqual(seen.prompts.map((p) => p.trim()), prompts.map((p) => p.trim()))
          assert.deepStrictEqual(seen.commands, commands.map((c) => `$ ${c}`))
          assert.strictEqual(seen.targetKind, "command")
        }),
      120_000
    )
  })
}
