/**
 * Test support: a TCP proxy in front of the fleet database that drops connections mid-stream.
 * Each accepted connection, with probability `cutChance`, is cut (both sockets destroyed) once a
 * random number of bytes (`0..maxCutBytes`, both directions together) has passed — anywhere in a
 * handshake, a query or a transaction. The proxy is closed with its scope.
 */
import type { Prng } from "@logbook/testkit"
import { Effect } from "effect"
import type { Scope } from "effect"
import * as net from "node:net"

/** A running proxy: its port, how many connections it cut so far, and a way to change how it cuts. */
export interface CuttingProxy {
  readonly port: number
  readonly cuts: () => number
  readonly setCuts: (chance: number, maxCutBytes: number) => void
}

/** Options of {@link cuttingProxy}. */
export interface CuttingProxyOptions {
  readonly upstreamHost: string
  readonly upstreamPort: number
  readonly prng: Prng
  readonly cutChance: number
  readonly maxCutBytes: number
}

/** Starts a proxy on a free 127.0.0.1 port. */
export const cuttingProxy = (options: CuttingProxyOptions): Effect.Effect<CuttingProxy, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: net.Server; readonly sockets: Set<net.Socket>; readonly proxy: CuttingProxy }>(
      (resume) => {
        const sockets = new Set<net.Socket>()
        let cuts = 0
        let chance = options.cutChance
        let maxBytes = options.maxCutBytes
        const server = net.createServer((client) => {
          const upstream = net.connect(options.upstreamPort, options.upstreamHost)
          sockets.add(client)
          sockets.add(upstream)
          const budget = options.prng.chance(chance) ? options.prng.int(0, maxBytes) : Infinity
          let passed = 0
          const close = () => {
            client.destroy()
            upstream.destroy()
            sockets.delete(client)
            sockets.delete(upstream)
          }
          const forward = (from: net.Socket, to: net.Socket) => {
            from.on("data", (chunk: Buffer) => {
              if (passed + chunk.length > budget) {
                const keep = Math.max(0, budget - passed)
                if (keep > 0) to.write(chunk.subarray(0, keep))
                passed = budget
                cuts++
                close()
                return
              }
              passed += chunk.length
              to.write(chunk)
            })
            from.on("error", close)
            from.on("close", close)
          }
          forward(client, upstream)
          forward(upstream, client)
        })
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          const port = typeof address === "object" && address !== null ? address.port : 0
          resume(Effect.succeed({
            server,
            sockets,
            proxy: {
              port,
              cuts: () => cuts,
              setCuts: (c: number, bytes: number) => {
                chance = c
                maxBytes = bytes
              }
            }
          }))
        })
      }
    ),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const s of sockets) s.destroy()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ proxy }) => proxy))
