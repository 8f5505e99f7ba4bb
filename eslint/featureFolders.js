// A local ESLint rule that keeps the feature folders of docs/architecture.md apart: inside a
// package, a module in a feature folder imports only its own folder, the package's base folders
// (the contract and the log, or what plays their part in that layer), the package-root
// `internal/` helpers, and the few edges listed below with their reason.
import path from "node:path"

/** Per package: the folders every feature may build on. */
const BASE = {
  domain: ["contract", "log", "internal"],
  store: ["fs", "log", "internal"],
  projections: ["session", "internal"],
  fleet: ["db", "internal"],
  // runtime: the CLI families build on the CLI's shared modules (cli/*.ts) and the host layers at the root
  runtime: ["cli", "", "internal"]
}

/** Deliberate edges between features, each with the reason it exists. */
const ALLOWED = {
  // the importers label the commands they write with the explanation's verification classifier
  "domain:import->explain": true,
  // the importer is the one writer in projections: it derives the memory view of what it wrote
  "projections:import->memory": true,
  // the replicator keeps the fleet's search documents in step with the lines it copies
  "fleet:replicate->memory": true,
  // the fleet commands print exactly what their local counterparts print, through the same renderers
  "runtime:cli/fleet->cli/session": true,
  "runtime:cli/fleet->cli/packs": true,
  "runtime:cli/fleet->cli/memory": true
}

/** The feature folder of a file under `<pkg>/src`: its first segment, or `cli/<family>` in runtime. */
const folderOf = (pkg, rel) => {
  const parts = rel.split(path.sep)
  if (parts.length === 1) return ""
  if (pkg === "runtime" && parts[0] === "cli") return parts.length === 2 ? "cli" : `cli/${parts[1]}`
  return parts[0]
}

export default {
  rules: {
    "feature-folders": {
      meta: {
        type: "problem",
        docs: { description: "a feature folder imports only the base folders of its package and itself" },
        schema: []
      },
      create(context) {
        const file = context.filename
        const m = file.match(/packages\/([^/]+)\/src\/(.+)$/)
        if (!m) return {}
        const pkg = m[1]
        const base = BASE[pkg]
        if (!base) return {}
        const srcDir = file.slice(0, file.length - m[2].length)
        const from = folderOf(pkg, m[2])
        if (from === "") return {}
        const check = (node, source) => {
          if (typeof source !== "string" || !source.startsWith(".")) return
          const target = path.relative(srcDir, path.resolve(path.dirname(file), source))
          if (target.startsWith("..")) return
          const to = folderOf(pkg, target)
          if (to === from || base.includes(to) || base.includes(to.split("/")[0]) && to.split("/")[0] === from) return
          // a CLI family builds on the CLI's shared modules and on the runtime feature of its name
          if (from.startsWith("cli/") && (to === "cli" || to === from.slice(4))) return
          if (ALLOWED[`${pkg}:${from}->${to}`]) return
          context.report({
            node,
            message: `${pkg}/${from}/ may import only its own folder and ${
              base.map((b) => b === "" ? "the package root" : `${b}/`).join(", ")
            }; ${to === "" ? "the package root" : `${to}/`} is another feature (docs/architecture.md)`
          })
        }
        return {
          ImportDeclaration: (node) => check(node, node.source.value),
          ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
          ExportAllDeclaration: (node) => check(node, node.source.value),
          ImportExpression: (node) => node.source.type === "Literal" && check(node, node.source.value)
        }
      }
    }
  }
}
