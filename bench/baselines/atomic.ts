/**
 * The atomic-replace protocol written plainly with sync syscalls: exclusive temp sibling,
 * write, fsync, close, rename over the destination, fsync the parent directory.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

let counter = 0

/** Atomically replaces `path` with `data`, durable when it returns. */
export const atomicWriteSync = (path: string, data: string): void => {
  const dir = Path.dirname(path)
  const tmp = Path.join(dir, `.${Path.basename(path)}.${process.pid}.${++counter}.tmp`)
  const fd = Fs.openSync(tmp, "wx", 0o600)
  Fs.writeSync(fd, data)
  Fs.fsyncSync(fd)
  Fs.closeSync(fd)
  Fs.renameSync(tmp, path)
  const dirFd = Fs.openSync(dir, Fs.constants.O_RDONLY | Fs.constants.O_DIRECTORY)
  Fs.fsyncSync(dirFd)
  Fs.closeSync(dirFd)
}
