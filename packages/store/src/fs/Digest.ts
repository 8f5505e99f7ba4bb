/**
 * The store's one SHA-256 of bytes (node:crypto) and the one signature of a file's state, shared
 * by every layer above the store that digests lines and files or notices that a file changed.
 * (The pure domain has its own SHA-256 for session ids and redaction digests: it may not import
 * node:crypto.)
 */
import { hash } from "node:crypto"
import type { FileInfo } from "./SessionFs.ts"

/** SHA-256 of bytes as lowercase hex. */
export const sha256Hex = (bytes: Uint8Array): string => hash("sha256", bytes, "hex")

/**
 * `size:mtimeMs` of a file's `lstat`: what caches and incremental readers compare to notice a
 * change. **Gotchas**: a rewrite that keeps both size and mtime (within the file system's
 * timestamp granularity) is not noticed; readers that must not miss one compare contents.
 */
export const fileSignature = (info: Pick<FileInfo, "size" | "mtimeMs">): string => `${info.size}:${info.mtimeMs}`
