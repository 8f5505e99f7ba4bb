/**
 * Where a session's files live. Every path the store touches is derived here from the
 * sessions root and the sanitised directory name, never from manifest contents, so a
 * hostile manifest cannot steer a write or a deletion outside the root.
 */
import { sessionDirName } from "@logbook/domain"
import * as NodePath from "node:path"

/** Default sessions root below a workspace: `<workspace>/.logbook/sessions`. */
export const defaultSessionsDir = (workspace: string): string => NodePath.join(workspace, ".logbook", "sessions")

/** The VT Code store location below a workspace, readable and writable with the same code. */
export const vtcodeSessionsDir = (workspace: string): string => NodePath.join(workspace, ".vtcode", "sessions")

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
}

/** Paths for the session directory `dirName` (already sanitised) directly below `sessionsDir`. */
export const pathsForDir = (sessionsDir: string, dirName: string): SessionPaths => {
  const root = NodePath.resolve(sessionsDir)
  const dir = NodePath.join(root, dirName)
  const indexDir = NodePath.join(dir, "index")
  const derivedDir = NodePath.join(dir, "derived")
  return {
    sessionsDir: root,
    dir,
    events: NodePath.join(dir, "events.jsonl"),
    manifest: NodePath.join(dir, "manifest.json"),
    lock: NodePath.join(dir, "session.lock"),
    pin: NodePath.join(dir, "retention-pin.json"),
    indexDir,
    turns: NodePath.join(indexDir, "turns.json"),
    marker: NodePath.join(indexDir, "pending-cap-rewrite.json"),
    turnsSidecar: NodePath.join(indexDir, "turns.bin"),
    derivedDir
  }
}

/** Paths for the raw session id `sessionId` (sanitised with the collision-safe `sessionDirName`). */
export const sessionPaths = (sessionsDir: string, sessionId: string): SessionPaths =>
  pathsForDir(sessionsDir, sessionDirName(sessionId))
