/**
 * CRC-32 (IEEE 802.3, the zlib polynomial) of byte ranges: the checksum every block of an on-disk
 * search segment carries, so a torn, truncated or bit-flipped block is detected when it is read
 * instead of being ranked. Node's native `zlib.crc32` computes it (a query checks every postings
 * run it reads, megabytes for common words, so a JavaScript loop would dominate the query).
 */
import { crc32 as zlibCrc32 } from "node:zlib"

/** The CRC-32 of `bytes` as an unsigned 32-bit integer. */
export const crc32 = (bytes: Uint8Array): number => zlibCrc32(bytes) >>> 0
