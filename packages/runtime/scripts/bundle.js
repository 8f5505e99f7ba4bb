// `npm run build` step after `tsc -b`: bundles the compiled CLI (dist/Main.js and everything it
// imports, Effect included) into one minified, tree-shaken CommonJS file, dist/bundle/logbook.cjs,
// and copies its entry (scripts/bundle-entry.js, which runs it with a V8 code cache taken after
// a run, one per command: the compiled CLI's command names are written into it) to
// dist/bundle/bin.js. `logbook` then loads one file instead of hundreds of modules.
// The native lock addon (fs-native-extensions) and Node's built-ins stay external. bin/logbook.js
// runs the bundle when it is at least as new as every package's last `tsc -b`, else dist/bin.js.
import { createHash } from "node:crypto"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { build } from "rolldown"

const dist = fileURLToPath(new URL("../dist/", import.meta.url))
// An absolute directory as the first argument bundles there instead (the bundle's test does).
const out = process.argv[2] === undefined
  ? fileURLToPath(new URL("../dist/bundle/", import.meta.url))
  : `${process.argv[2]}/`

// Node built-ins that take milliseconds to load and that most commands never touch: the bundle
// loads each on its first use instead of at start. zlib, net, tls and http are there for the
// web app's server and the PostgreSQL driver; loaded eagerly they cost `logbook mcp` about 20 ms
// of its start (tls alone 7 ms, and it loads crypto). Rolldown's CommonJS output binds every
// external as `let <name> = require("<id>");` (plus `<name> = __toESM(<name>, 1);`) and reads
// members off that binding, which a proxy can stand in for; a binding used any other way
// (its `default`) keeps the eager require.
const LAZY_BUILTINS = [
  "node:crypto",
  "node:child_process",
  "node:readline",
  "node:zlib",
  "node:tls",
  "node:net",
  "node:http"
]
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const lazyBuiltins = {
  name: "lazy-builtins",
  renderChunk(code) {
    let out = code
    for (const id of LAZY_BUILTINS) {
      const eager = new RegExp(`^let (\\w+) = require\\("${escape(id)}"\\);$`, "m").exec(out)
      const binding = eager?.[1]
      if (eager === null || binding === undefined || out.includes(`${binding}.default`)) continue
      out = out.replace(eager[0], `let ${binding} = __lazyBuiltin("${id}");`)
        .replace(new RegExp(`^${binding} = __toESM\\(${binding}, 1\\);$`, "m"), "")
    }
    if (out === code) return null
    return "const __lazyBuiltin = (id) => {\n\tlet loaded;\n" +
      "\treturn new Proxy({}, { get: (_, key) => (loaded ??= require(id))[key] });\n};\n" + out
  }
}

// effect/cli builds an `Intl.Segmenter` when its module loads (ICU's break rules: the largest
// single cost of starting the CLI), though only help and table layout measure text with it.
// The bundle builds it on first use; if a later Effect writes it differently, the build says so.
const SEGMENTER =
  /const graphemeSegmenter = \/\*#__PURE__\*\/\s*new Intl\.Segmenter\(undefined, \{\s*granularity: "grapheme"\s*\}\);/
const lazySegmenter = {
  name: "lazy-segmenter",
  transform(code, id) {
    if (!id.replaceAll("\\", "/").endsWith("/effect/dist/cli/CliOutput.js")) return null
    if (!SEGMENTER.test(code)) {
      this.warn("effect/cli's graphemeSegmenter changed: it is built at start again (scripts/bundle.js)")
      return null
    }
    return code.replace(
      SEGMENTER,
      "let graphemeSegmenterBuilt;\nconst graphemeSegmenter = { segment: (text) => (graphemeSegmenterBuilt ??= " +
        "new Intl.Segmenter(undefined, { granularity: \"grapheme\" })).segment(text) };"
    )
  }
}

rmSync(out, { recursive: true, force: true })
await build({
  input: `${dist}Main.js`,
  platform: "node",
  external: [/^node:/, "fs-native-extensions"],
  treeshake: true,
  logLevel: "warn",
  // Effect reads `import.meta.env` where a bundler defines it; Node has none.
  transform: { define: { "import.meta.env": "undefined" } },
  plugins: [lazyBuiltins, lazySegmenter],
  output: { file: `${out}logbook.cjs`, format: "cjs", codeSplitting: false, minify: true, charset: "ascii" }
})
// The entry names its code cache after the bundle's hash, and reads an all-ASCII bundle as
// Latin-1 (the same text, decoded faster, and a one-byte string in V8). Written last: its time
// stamp is the bundle's, which bin/logbook.js compares with the builds'.
const code = readFileSync(`${out}logbook.cjs`)
// The top-level command names, read from the compiled CLI: the entry keeps a code cache per command.
const { logbookCli } = await import(new URL("../dist/Cli.js", import.meta.url).href)
const commands = logbookCli.subcommands.flatMap((group) => group.commands.map((command) => command.name))
if (commands.length === 0 || !commands.every((name) => /^[a-z][a-z-]*$/u.test(name))) {
  throw new Error(`the CLI's command names could not be read (${JSON.stringify(commands)})`)
}
const built = {
  sha256: createHash("sha256").update(code).digest("hex"),
  encoding: code.every((byte) => byte < 0x80) ? "latin1" : "utf8",
  commands
}
const entry = readFileSync(fileURLToPath(new URL("./bundle-entry.js", import.meta.url)), "utf8")
const placeholder = `const BUILT = { sha256: "(set by scripts/bundle.js)", encoding: "utf8", commands: [] }`
if (!entry.includes(placeholder)) throw new Error("bundle-entry.js lost its BUILT line")
writeFileSync(`${out}bin.js`, entry.replace(placeholder, `const BUILT = ${JSON.stringify(built)}`), { mode: 0o755 })
