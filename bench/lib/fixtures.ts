/**
 * On-disk data sets for the benchmarks: a temp root under `os.tmpdir()` removed at exit, and
 * session logs of a given size written directly as canonical lines (`encodeLine`) with
 * `node:fs`, which is far faster than appending gigabytes through the store. A block of
 * seeded turns is generated once and repeated; every turn is complete, so the file is a
 * valid log with ~20 events and ~9 KB per turn.
 */
import { sessionDirName } from "@logbook/domain"
import type { ThreadEvent } from "@logbook/domain"
import { encodeLine } from "@logbook/domain"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { makeTurns } from "./events.ts"
import { note, size } from "./measure.ts"

/** The directory of `sessionId` below `sessionsDir`, as the store names it. */
export const sessionDir = (sessionsDir: string, sessionId: string): string =>
  Path.join(sessionsDir, sessionDirName(sessionId))

/** Creates the benchmark's temp root; it is removed when the process exits, however it exits. */
export const makeTempRoot = (): string => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "logbook-bench-"))
  const remove = () => Fs.rmSync(root, { recursive: true, force: true })
  process.on("exit", remove)
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      remove()
      process.exit(130)
    })
  }
  return root
}

/** A session log written for a benchmark. */
export interface LogFixture {
  readonly sessionsDir: string
  readonly sessionId: string
  readonly dir: string
  readonly eventsPath: string
  readonly manifestPath: string
  readonly bytes: number
  readonly turns: number
  readonly events: number
}

const BLOCK_TURNS = 256

const turnBytes = (turn: ReadonlyArray<ThreadEvent>): Buffer =>
  Buffer.from(turn.map((event) => `${encodeLine(event)}\n`).join(""), "utf8")

/**
 * Writes `events.jsonl` of session `sessionId` with at least `targetBytes` bytes of whole
 * turns (no manifest, no index: the first open rescans).
 */
export const writeLogFixture = (
  sessionsDir: string,
  sessionId: string,
  targetBytes: number,
  seed: number
): LogFixture => {
  const dir = sessionDir(sessionsDir, sessionId)
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const eventsPath = Path.join(dir, "events.jsonl")
  const turns = makeTurns(seed, BLOCK_TURNS).map(turnBytes)
  const perTurnEvents = 20
  const block = Buffer.concat(turns)
  const fd = Fs.openSync(eventsPath, "w", 0o600)
  let bytes = 0
  let turnCount = 0
  let lastReport = 0
  if (targetBytes >= 256e6) note(`  writing a ${size(targetBytes)} log …`)
  while (bytes + block.length <= targetBytes) {
    Fs.writeSync(fd, block)
    bytes += block.length
    turnCount += turns.length
    if (bytes - lastReport >= 256e6) {
      lastReport = bytes
      note(`    ${size(bytes)}`)
    }
  }
  for (const turn of turns) {
    if (bytes >= targetBytes) break
    Fs.writeSync(fd, turn)
    bytes += turn.length
    turnCount++
  }
  Fs.closeSync(fd)
  return {
    sessionsDir,
    sessionId,
    dir,
    eventsPath,
    manifestPath: Path.join(dir, "manifest.json"),
    bytes,
    turns: turnCount,
    events: turnCount * perTurnEvents
  }
}

/** The inode of a file, or undefined when it is missing (a changed inode means it was rewritten). */
export const inodeOf = (path: string): number | undefined => {
  const stat = Fs.statSync(path, { throwIfNoEntry: false })
  return stat?.ino
}
