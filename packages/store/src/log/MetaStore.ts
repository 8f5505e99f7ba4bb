/**
 * Read access to the per-session metadata files: `manifest.json`, `index/turns.json` and the
 * pending cap-rewrite marker. Loads never follow links; an absent or unparseable file is "none"
 * (a reader then rescans), while an I/O error such as a planted symlink fails. Writing them is
 * the durability barrier's job alone (see `EventLog`), so no writer is public.
 */
import type { Manifest, PendingCapRewrite, TurnEntry } from "@logbook/domain"
import type { Effect, Option } from "effect"
import { SessionFs } from "../fs/SessionFs.ts"
import type { StoreIoError } from "../fs/StoreError.ts"
import { loadManifestWith, loadMarkerWith, loadTurnIndexWith } from "./internal/metaFiles.ts"

/** Loads `manifest.json`; absent or malformed → none. */
export const loadManifest = (path: string): Effect.Effect<Option.Option<Manifest>, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => loadManifestWith(fs, path))

/** Loads `index/turns.json` entries; absent or malformed → none. */
export const loadTurnIndex = (
  path: string
): Effect.Effect<Option.Option<ReadonlyArray<TurnEntry>>, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => loadTurnIndexWith(fs, path))

/** Loads the cap-rewrite marker; absent or malformed → none. */
export const loadMarker = (path: string): Effect.Effect<Option.Option<PendingCapRewrite>, StoreIoError, SessionFs> =>
  SessionFs.use((fs) => loadMarkerWith(fs, path))
