/**
 * `logbook serve [--port N] [--host 127.0.0.1] [--open] [--db URL | --fleet]`: the local web app
 * over this invocation's sessions root, or a fleet (docs/serve.md), until Ctrl-C. Prints the URL with the run's token;
 * a bind beyond loopback prints a warning. Read-only (the search index snapshot aside).
 */
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { spawn } from "node:child_process"
import { CommandFailed, UsageError } from "../Errors.ts"
import { fleetSourceFlags } from "../Flags.ts"
import { note, printLines } from "../Output.ts"
import { location } from "../Root.ts"

/** Asks the desktop to open `url` in the default browser; whether the opener started. */
const openBrowser = (url: string) =>
  Effect.callback<boolean>((resume) => {
    const [cmd, args] = process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
      ? ["cmd", ["/c", "start", "", url]]
      : ["xdg-open", [url]]
    const child = spawn(cmd, args, { detached: true, stdio: "ignore" })
    child.on("error", () => resume(Effect.succeed(false)))
    child.on("spawn", () => {
      child.unref()
      resume(Effect.succeed(true))
    })
  })

/** `serve`. */
export const serveCommand = Command.make(
  "serve",
  {
    port: Flag.Int("port").pipe(
      Flag.filter((n) => n >= 0 && n <= 65535, (n) => `--port must be 0..65535, got ${n}`),
      Flag.withDescription("Port to listen on (default 8765; 0 picks a free port)"),
      Flag.withDefault(8765)
    ),
    host: Flag.String("host").pipe(
      Flag.withDescription(
        "Address to bind (default 127.0.0.1: this machine only). 0.0.0.0 exposes the store to the network: every page still needs the token"
      ),
      Flag.withDefault("127.0.0.1")
    ),
    open: Flag.Boolean("open").pipe(
      Flag.withDescription("Open the URL in the default browser once the server listens"),
      Flag.withDefault(false)
    ),
    ...fleetSourceFlags
  },
  Effect.fn("cli.serve")(function*({ db, fleet, host, open, port }) {
    const where = yield* location
    if (host.length === 0) {
      return yield* new UsageError({
        detail: "--host is empty",
        hint: "give an address to bind, e.g. --host 127.0.0.1"
      })
    }
    // Loaded on use: the HTTP server stays out of every other command's start.
    const { isExposed, ServeToken, startServer } = yield* Effect.promise(() => import("../../serve/index.ts"))
    // Loaded on use, as the fleet commands are: the PostgreSQL driver stays out of a store's server.
    const target = Option.isSome(db) || fleet
      ? yield* (yield* Effect.promise(() => import("../../serve/ServeFleet.ts"))).serveFleetTarget(db)
      : undefined
    yield* Effect.scoped(Effect.gen(function*() {
      const running = yield* startServer({ sessionsDir: where.sessionsDir, fleet: target, host, port }).pipe(
        Effect.provide(ServeToken.layerRandom),
        Effect.mapError((e) =>
          e._tag === "FleetError"
            ? new CommandFailed({
              detail: `could not reach the fleet: ${e.message}`,
              hint: "check --db (or LOGBOOK_DATABASE_URL) and that the server is up; `logbook fleet sessions` tests it"
            })
            : new CommandFailed({
              detail: `could not listen on ${host}:${port}: ${
                e.cause instanceof Error ? e.cause.message : String(e.cause)
              }`,
              hint: "pick another port with --port N (0 picks a free one), or stop what is using it"
            })
        )
      )
      if (isExposed(host)) {
        yield* note(
          `warning: listening on ${host}, reachable from other machines; anyone with the URL's token can read every session of this store`
        )
      }
      yield* printLines(
        `Logbook is serving ${target === undefined ? where.sessionsDir : `the fleet ${target.display}`}`,
        `Open ${running.url}`,
        "(the token in the URL is this run's password; press Ctrl-C to stop)"
      )
      if (open && !(yield* openBrowser(running.url))) {
        yield* note("note: could not start the desktop's URL opener; open the URL above yourself")
      }
      return yield* Effect.never
    }))
  })
).pipe(
  Command.withShortDescription("Browse, search and read the sessions in a local web app"),
  Command.withDescription(
    "Serve a read-only web app over the sessions root: the sessions (filter, sort, pages), search as you type, " +
      "each session's conversation by turn, its explanation with evidence links to the events, and live updates " +
      "of an active session. Binds 127.0.0.1 by default; every request needs the token printed with the URL. " +
      "With --db or --fleet it serves every session replicated into a fleet instead (no live view). See docs/serve.md."
  ),
  Command.withExamples([
    { command: "logbook serve --open", description: "Serve ./.logbook/sessions and open it in the browser" },
    {
      command: "logbook --sessions-dir ~/repo/.logbook/sessions serve --port 0",
      description: "Another store, any free port"
    }
  ])
)
