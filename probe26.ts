import { SessionFs, SessionRegistry } from "@logbook/store"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import { deriveSessionMemory } from "./packages/projections/src/memory/MemoryDerivation.ts"
const storeLayer = Layer.provideMerge(SessionRegistry.layer, SessionFs.layerNode)
const run = async () => {
  const dir = "/tmp/p26/pp0"
  const session = fs.readdirSync(dir)[0]!
  for (let i = 0; i < 4; i++) {
    fs.rmSync(`${dir}/${session}/derived/memory.json`, { force: true })
    const t1 = performance.now()
    await Effect.runPromise(deriveSessionMemory(dir, session).pipe(Effect.provide(storeLayer)))
    console.log(`derive ${(performance.now() - t1).toFixed(0)} ms`)
  }
}
run()
