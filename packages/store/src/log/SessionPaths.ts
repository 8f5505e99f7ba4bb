/**
 * Where a session's files live. Every path the store touches is derived here from the
 * sessions root and the sanitised directory name, never from manifest contents, so a
 * hostile manifest cannot steer a write or a deletion outside the root.
 */
import { sessionDirName } from "@logbook/domain"
import { absolutePath, childPath } from "../fs/StorePath.ts"

/** Default sessions root below a workspace: `<workspace>/.logbook/sessions`. */
export const defaultSessionsDir = (workspace: string): string => childPath(workspace, ".logbook", "sessions")

/** The VT Code store location below a workspace, readable and writable with the same code. */
export const vtcodeSessionsDir = (workspace: string): string => childPath(workspace, ".vtcode", "sessions")

/** All paths of one session directory. */
export interface SessionPaths {
  readonly sessionsDir: string
  readonly dir: string
  readonly events: string
  readonly manifest: string
  readonly lock: string
  readonly pin: string
  readonly indexDir: string
  readonly turns: string
  readonly marker: string
  /** `index/turns.bin`: the derived binary copy of `turns.json` (see `TurnIndexSidecar`). */
  readonly turnsSidecar: string
  readonly derivedDir: string
  /**
   * `derived/import.json`: present when the session was imported from another agent's files, which
   * makes it an archive retention keeps (docs/import.md#imported-history-is-an-archive).
   */
  readonly importState: string
}

/** Paths for the session directory `dirName` (already sanitised) directly below `sessionsDir`. */
export const pathsForDir = (sessionsDir: string, dirName: string): SessionPaths => {
  // Not normalised when the root has a `..` component: the file-system seam then refuses every path.
  const root = absolutePath(sessionsDir)
  const dir = childPath(root, dirName)
  const indexDir = childPath(dir, "index")
  const derivedDir = childPath(dir, "derived")
  return {
    sessionsDir: root,
    dir,
    events: childPath(dir, "events.jsonl"),
    manifest: childPath(dir, "manifest.json"),
    lock: childPath(dir, "session.lock"),
    pin: childPath(dir, "retention-pin.json"),
    indexDir,
    turns: childPath(indexDir, "turns.json"),
    marker: childPath(indexDir, "pending-cap-rewrite.json"),
    turnsSidecar: childPath(indexDir, "turns.bin"),
    derivedDir,
    importState: childPath(derivedDir, "import.json")
  }
}

/** Paths for the raw session id `sessionId` (sanitised with the collision-safe `sessionDirName`). */
export const sessionPaths = (sessionsDir: string, sessionId: string): SessionPaths =>
  pathsForDir(sessionsDir, sessionDirName(sessionId))
