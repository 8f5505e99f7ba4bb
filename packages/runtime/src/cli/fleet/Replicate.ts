/**
 * `logbook replicate --db postgres://… [--watch] [--session ID] [--json]`: replicates the sessions
 * of the store into a fleet database (docs/fleet.md#replication). The connection string comes
 * from `--db` (or its alias `--to`) or `LOGBOOK_DATABASE_URL` and is never printed. The fleet client and the replicator
 * are loaded only when this command runs, so other commands do not pay for the database driver.
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { fleetDbFlag, jsonFlag } from "../Flags.ts"
import { location } from "../Root.ts"

/** `replicate`. */
export const replicateCommand = Command.make(
  "replicate",
  {
    db: fleetDbFlag.pipe(Flag.withAlias("to")),
    watch: Flag.Boolean("watch").pipe(
      Flag.withDescription("Keep replicating new lines every second until interrupted (Ctrl-C)"),
      Flag.withDefault(false)
    ),
    session: Flag.String("session").pipe(
      Flag.filter((id) => id.length > 0, () => "--session is empty"),
      Flag.withDescription("Replicate only this session (its id or directory name)"),
      Flag.optional
    ),
    batchLines: Flag.Int("batch-lines").pipe(
      Flag.filter((n) => n >= 1 && n <= 6000, (n) => `--batch-lines must be between 1 and 6000, got ${n}`),
      Flag.withDescription("Lines per transaction (default 2000; batches also stop at 1 MiB of log)"),
      Flag.optional
    ),
    json: jsonFlag
  },
  Effect.fn("cli.replicate")(function*({ batchLines, db, json, session, watch }) {
    const where = yield* location
    const run = yield* Effect.promise(() => import("./ReplicateRun.ts"))
    yield* run.runReplicate({
      sessionsDir: where.sessionsDir,
      db,
      session: Option.getOrUndefined(session),
      watch,
      json,
      batchLines: Option.getOrUndefined(batchLines)
    })
  })
).pipe(
  Command.withDescription(
    "Replicate the store's sessions into a PostgreSQL fleet database: every complete line of every " +
      "events.jsonl exactly once (keyed by session, epoch and byte offset, the cursor advanced in the same " +
      "transaction), plus the sessions' other files. Migrations run first. A line that differs from the one the " +
      "fleet holds is reported and that session stops (exit 5). Progress on stderr; retries with backoff when the " +
      "connection drops."
  ),
  Command.withExamples([
    {
      command: "LOGBOOK_DATABASE_URL=postgres://logbook@db.internal/fleet logbook replicate",
      description: "Replicate every session once"
    },
    {
      command: "logbook --sessions-dir ~/.logbook/sessions replicate --db postgres://logbook@db/fleet --watch",
      description: "Keep replicating as agents append"
    }
  ])
)
