/**
 * Shared test support for the runtime package: the Node store layers and re-exports the
 * tests need from the store.
 */
import { storeLayerNode } from "../src/SessionMemory.ts"

export { IdGenerator, sequentialIds, sessionPaths } from "@logbook/store"

/** The Node store services (file system, registry, retention) for tests. */
export const storeLayerNodeForTests = storeLayerNode
