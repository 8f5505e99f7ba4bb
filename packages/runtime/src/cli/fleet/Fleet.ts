/**
 * `logbook fleet …`: the fleet (docs/fleet.md), session stores of many machines replicated into
 * PostgreSQL. `sessions`, `show` and `pack verify` print the same shapes as their local
 * counterparts plus each session's origin host; `restore` recreates a session directory;
 * `search` ranks as the local `search` does (FleetSearch.ts). The
 * connection string comes from `--db` or `LOGBOOK_DATABASE_URL` and is never printed.
 *
 * **Gotchas:** this module only declares the commands; their handlers live in `FleetQueries.ts`
 * (and `FleetSearchRun.ts`), imported when a fleet command runs, so the PostgreSQL driver is never
 * loaded by the others.
 */
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { fleetDbFlag, jsonFlag, sessionArgument } from "../Flags.ts"
import { fleetSearchCommand } from "./FleetSearch.ts"

/** The handlers, loaded on first use. */
const queries = Effect.promise(() => import("./FleetQueries.ts"))

/** `fleet sessions`. */
const sessionsCommand = Command.make(
  "sessions",
  {
    db: fleetDbFlag,
    limit: Flag.Int("limit").pipe(
      Flag.filter((n) => n >= 1, (n) => `--limit must be at least 1, got ${n}`),
      Flag.withDescription("Show at most N sessions (the most recently updated)"),
      Flag.optional
    ),
    json: jsonFlag
  },
  Effect.fn("cli.fleet.sessions.run")(function*(args) {
    return yield* (yield* queries).fleetSessions(args)
  })
).pipe(
  Command.withShortDescription("List the fleet's sessions, most recently updated first"),
  Command.withDescription(
    "List the sessions replicated into the fleet, as `logbook sessions` lists a store, with the host each " +
      "came from (ORIGIN). The fleet holds no locks: every session shows as free. Read-only."
  ),
  Command.withExamples([
    { command: "logbook fleet sessions --db postgres://logbook@db:5432/fleet", description: "Every session" },
    { command: "LOGBOOK_DATABASE_URL=postgres://… logbook fleet sessions --json", description: "As JSON" }
  ])
)

/** `fleet show`. */
const showCommand = Command.make(
  "show",
  { db: fleetDbFlag, session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.fleet.show.run")(function*(args) {
    return yield* (yield* queries).fleetShow(args)
  })
).pipe(
  Command.withShortDescription("Show a fleet session: manifest, turns, size, origin host"),
  Command.withDescription(
    "Show one replicated session as `logbook show` shows a local one (from its replicated manifest and turn " +
      "index, or a rescan of its replicated lines when they are stale), with its origin host. Read-only."
  ),
  Command.withExamples([
    { command: "logbook fleet show demo --db postgres://logbook@db:5432/fleet", description: "Describe `demo`" }
  ])
)

/** `fleet pack verify`. */
const packVerifyCommand = Command.make(
  "verify",
  {
    db: fleetDbFlag,
    session: sessionArgument,
    pack: Flag.String("pack").pipe(
      Flag.withDescription(
        "Check this pack file (e.g. an auditor's own copy) instead of the replicated derived/audit-pack.json"
      ),
      Flag.optional
    ),
    verifyKey: Flag.String("verify-key").pipe(
      Flag.withAlias("public-key"),
      Flag.withDescription("Require a valid signature by this Ed25519 public key (PEM); also --public-key"),
      Flag.optional
    ),
    json: jsonFlag
  },
  Effect.fn("cli.fleet.pack.verify.run")(function*(args) {
    return yield* (yield* queries).fleetPackVerify(args)
  })
).pipe(
  Command.withShortDescription("Check a fleet session against its replicated audit pack; exit 5 on any difference"),
  Command.withDescription(
    "Check the replicated derived/audit-pack.json of a session against what the fleet holds: events.jsonl " +
      "rebuilt from its replicated lines, every other file from its replicated copy, sizes and SHA-256 " +
      "recomputed from the stored bytes. Same report and exit codes as `logbook pack verify`: 0 verified, " +
      "5 mismatched or missing files or a wrong digest or signature, 4 invalid pack. With --pack, the pack is " +
      "read from that file (an auditor's copy kept outside the system it audits)."
  ),
  Command.withExamples([
    {
      command: "logbook fleet pack verify demo --verify-key keys/audit-pack-signing.pub",
      description: "Check `demo`'s signed pack from the fleet alone"
    },
    {
      command: "logbook fleet pack verify demo --pack audit/demo.pack.json --verify-key keys/audit-pack-signing.pub",
      description: "Check the fleet's copy of `demo` against the auditor's own pack"
    }
  ])
)

/** `fleet pack`. */
const packCommand = Command.make("pack").pipe(
  Command.withShortDescription("Verify audit packs against the fleet"),
  Command.withSubcommands([packVerifyCommand])
)

/** `fleet restore`. */
const restoreCommand = Command.make(
  "restore",
  { db: fleetDbFlag, session: sessionArgument, json: jsonFlag },
  Effect.fn("cli.fleet.restore.run")(function*(args) {
    return yield* (yield* queries).fleetRestore(args)
  })
).pipe(
  Command.withShortDescription("Recreate a session directory from the fleet"),
  Command.withDescription(
    "Recreate a replicated session in this machine's store (--sessions-dir, --workspace or " +
      "LOGBOOK_SESSIONS_DIR), byte-identical to what was replicated: events.jsonl rebuilt from its lines, " +
      "every other file from its replicated copy, each checked against its stored digest. Written into a " +
      "private staging directory and renamed into place; an existing session is never overwritten."
  ),
  Command.withExamples([
    {
      command: "logbook --sessions-dir ./restored fleet restore demo --db postgres://logbook@db:5432/fleet",
      description: "Restore `demo` into ./restored/demo"
    }
  ])
)

/** `fleet` with its subcommands. */
export const fleetCommand = Command.make("fleet").pipe(
  Command.withShortDescription("Query the fleet: sessions replicated from many machines into PostgreSQL"),
  Command.withDescription(
    "Query the fleet, where `logbook replicate` gathers the session stores of many machines: list and show " +
      "sessions, search them, verify their audit packs and restore them. The connection string comes from --db or " +
      "LOGBOOK_DATABASE_URL and is never printed."
  ),
  Command.withSubcommands([fleetSearchCommand, sessionsCommand, showCommand, packCommand, restoreCommand])
)
