/**
 * The smallest server P12 compares `logbook mcp` with: one `echo` tool on `effect/ai`'s
 * `McpServer.layerStdio`, the library the issue requires, with nothing of Logbook in it. The tool
 * answers `{ text }` with `size` characters, so a warm call can carry as much as a `read_turn`
 * page. Bundled and run with a code cache by `mcpFloor.ts`, as `logbook mcp` is.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import { Effect, Layer, Schema } from "effect"
import { McpProtocol, McpServer, Tool, Toolkit } from "effect/ai"

const Echo = Tool.make("echo", {
  description: "Answers `size` characters",
  parameters: Schema.Struct({ size: Schema.Int }),
  success: Schema.Struct({ text: Schema.String })
})

const Tools = Toolkit.make(Echo)

const server = McpServer.layerStdio({
  name: "floor",
  version: "1.0.0",
  protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26, McpProtocol.v2024_11_05],
  registrations: McpServer.toolkit(Tools).pipe(
    Layer.provide(Tools.toLayer(Tools.of({ echo: ({ size }) => Effect.succeed({ text: "x".repeat(size) }) })))
  )
})

NodeRuntime.runMain(Layer.launch(server.pipe(Layer.provide(NodeStdio.layer), Layer.provide(NodeServices.layer))))
