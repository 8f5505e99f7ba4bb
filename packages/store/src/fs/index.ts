/**
 * The file system boundary: `SessionFs` (the only module that touches `node:fs`), its Node and
 * fault-injecting layers, and the store's error types.
 */
export * from "./Digest.ts"
export * from "./RegularFiles.ts"
export * from "./SessionFs.ts"
export * from "./StoreError.ts"
export * from "./StorePath.ts"
