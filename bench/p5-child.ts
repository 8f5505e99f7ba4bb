/**
 * P5 child process: opens a session whose manifest was deleted (a full rescan), reconstructs
 * its first, middle and last turns, closes it, and prints one JSON line with its peak RSS
 * (`process.resourceUsage().maxRSS`, KiB on Linux) so the parent measures this work alone.
 *
 * With `--floor` it only loads the same modules and reports, which gives the RSS of the
 * runtime itself (Node, type stripping, Effect, Logbook code) to compare the peak against.
 *
 * Usage: node --conditions=@logbook/source bench/p5-child.ts <sessionsDir> <sessionId> | --floor
 */
import { EventLog } from "@logbook/store"
import { Effect } from "effect"
import { runStore, uncapped } from "./lib/logbook.ts"

const [sessionsDir, sessionId] = process.argv.slice(2)
if (sessionsDir === "--floor") {
  console.log(JSON.stringify({ maxRssKb: process.resourceUsage().maxRSS }))
  process.exit(0)
}
if (sessionsDir === undefined || sessionId === undefined) {
  console.error("usage: p5-child.ts <sessionsDir> <sessionId>")
  process.exit(2)
}

const result = await runStore(Effect.gen(function*() {
  const t0 = performance.now()
  const log = yield* EventLog.open({ sessionsDir, sessionId, ...uncapped })
  const t1 = performance.now()
  const index = yield* log.turnIndex
  const picks = [index[0], index[index.length >> 1], index[index.length - 1]]
  let events = 0
  for (const entry of picks) {
    if (entry === undefined) continue
    const turn = yield* log.reconstructTurn(entry.turn_number)
    events += turn.events.length
  }
  const t2 = performance.now()
  const manifest = yield* log.manifest
  return {
    scanMs: t1 - t0,
    reconstructMs: t2 - t1,
    turns: index.length,
    eventCount: manifest.event_count,
    reconstructedEvents: events
  }
}))

console.log(JSON.stringify({ ...result, maxRssKb: process.resourceUsage().maxRSS }))
