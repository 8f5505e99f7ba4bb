// `npm run build` step after `tsc -b`: bundles the compiled CLI (dist/bin.js and everything it
// imports, Effect included) into dist/bundle/, tree-shaken, so `logbook` loads a few large files
// instead of hundreds of modules: about half the start time and a third less memory. The native
// lock addon (fs-native-extensions) and Node's built-ins stay external. bin/logbook.js runs the
// bundle when it is at least as new as every package's last `tsc -b`, else dist/bin.js.
import { rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const dist = fileURLToPath(new URL("../dist/", import.meta.url))
// An absolute directory as the first argument bundles there instead (the bundle's test does).
const out = process.argv[2] === undefined
  ? fileURLToPath(new URL("../dist/bundle/", import.meta.url))
  : `${process.argv[2]}/`

rmSync(out, { recursive: true, force: true })
await build({
  input: `${dist}bin.js`,
  platform: "node",
  external: [/^node:/, "fs-native-extensions"],
  treeshake: true,
  logLevel: "warn",
  // The entry enables the compile cache before it imports the CLI, so that import stays a separate chunk.
  output: { dir: out, format: "esm", entryFileNames: "bin.js", minify: false }
})
