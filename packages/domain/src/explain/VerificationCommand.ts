/**
 * The verification classifier (docs/explain.md#verification-commands): whether a shell command
 * line runs a test, lint, type-check or build, read from the command itself because real agents
 * (Claude Code, Codex, Gemini CLI) never label their commands. The explanation fold asks it for
 * every command whose context carries no `activity`, and the importers use it to set
 * `activity: "verification"` on what they write.
 *
 * It reads the line the way a shell would split it — quotes, `&&` / `||` / `;` / `|` / newlines,
 * `bash -lc '…'` wrappers, `VAR=value` prefixes, `env` / `time` / `timeout` / `npx`-style
 * runners — and then matches the program and its subcommand against a table per ecosystem. A
 * chain is a check when one of its simple commands is; only the first stage of a pipeline counts,
 * so `grep test` or `echo npm test` never are.
 *
 * **Gotchas**: the classification says what was *run*, not whether it passed; a passed check
 * still needs exit code 0. The input is cut at {@link MAX_CLASSIFIED_CHARS} so a multi-megabyte
 * heredoc costs no more than a short command; heredoc bodies are skipped, never classified.
 */

/** What a verification command checks. */
export type VerificationKind = "test" | "lint" | "typecheck" | "build"

/** Only this many characters of a command line are read (the program and subcommand come first). */
export const MAX_CLASSIFIED_CHARS = 8192

/** Script names (npm scripts, make targets, mise/just/task tasks) and what they check. */
const scriptKind = (name: string): VerificationKind | undefined => {
  const base = name.toLowerCase().split(/[:/]/u)[0] ?? ""
  switch (base) {
    case "test":
    case "tests":
    case "t":
    case "tst":
    case "spec":
    case "e2e":
    case "unit":
    case "integration":
    case "coverage":
    case "cov":
      return "test"
    case "lint":
    case "eslint":
    case "fmt-check":
    case "format-check":
    case "clippy":
    case "vet":
    case "biome":
      return "lint"
    case "typecheck":
    case "type-check":
    case "typecheck-all":
    case "types":
    case "check-types":
    case "tsc":
    case "mypy":
    case "pyright":
      return "typecheck"
    case "build":
    case "compile":
    case "check":
    case "verify":
    case "ci":
    case "validate":
      return base === "build" || base === "compile" ? "build" : "test"
    default:
      return base.startsWith("test") ? "test" : base.startsWith("lint") ? "lint" : undefined
  }
}

/** Flags of package managers and task runners that take a value (the value is not the subcommand). */
const VALUE_FLAGS: ReadonlySet<string> = new Set([
  "--prefix",
  "-C",
  "--dir",
  "--cwd",
  "--filter",
  "-F",
  "--workspace",
  "--package",
  "-pl",
  "--manifest-path",
  "-f",
  "--file",
  "--makefile",
  "-j",
  "--jobs",
  "--taskfile",
  "--justfile",
  "--working-directory",
  "--project",
  "-P"
])

/** npm's `-w <workspace>` takes a value (pnpm's `-w` is the workspace root, a switch). */
const NPM_VALUE_FLAGS: ReadonlySet<string> = new Set([...VALUE_FLAGS, "-w"])

/** The first argument that is not a flag (skipping the values of {@link VALUE_FLAGS}), and the rest. */
const subcommand = (
  args: ReadonlyArray<string>,
  valueFlags: ReadonlySet<string> = VALUE_FLAGS
): { readonly sub: string | undefined; readonly rest: ReadonlyArray<string> } => {
  for (let i = 0; i < args.length; i++) {
    const a = args[i] ?? ""
    if (a === "--") continue
    if (a.startsWith("-")) {
      if (valueFlags.has(a)) i++
      continue
    }
    return { sub: a, rest: args.slice(i + 1) }
  }
  return { sub: undefined, rest: [] }
}

/** Asking a tool for its version or help runs nothing. */
const asksForHelp = (args: ReadonlyArray<string>): boolean =>
  args.some((a) => a === "--version" || a === "-v" && args.length === 1 || a === "--help" || a === "-h" || a === "-V")

/** `npm`, `pnpm`, `yarn`, `bun`: `test`, `run <script>`, or (yarn, pnpm, bun) `<script>` directly. */
const packageManager = (program: string, args: ReadonlyArray<string>): VerificationKind | undefined => {
  const { rest, sub } = subcommand(args, program === "npm" ? NPM_VALUE_FLAGS : VALUE_FLAGS)
  if (sub === undefined) return undefined
  if (sub === "test" || sub === "t" || sub === "tst") return "test"
  if (sub === "run" || sub === "run-script" || sub === "run-p" || sub === "run-s") {
    const script = subcommand(rest).sub
    return script === undefined ? undefined : scriptKind(script)
  }
  if (sub === "exec" || sub === "dlx" || sub === "x") return classifyWords(rest)
  // `yarn workspace <name> <script>` runs the script of one workspace.
  if (sub === "workspace") return packageManager(program, rest.slice(1))
  // npm runs scripts only through `test` and `run`; `npm build` and the like are not scripts.
  if (program === "npm") return undefined
  if (sub === "install" || sub === "add" || sub === "remove" || sub === "dev" || sub === "start") return undefined
  return scriptKind(sub)
}

/** `make`, `mise`, `just`, `task`, `rake`, `nx`, `turbo`: the target or task names a check. */
const taskRunner = (program: string, args: ReadonlyArray<string>): VerificationKind | undefined => {
  let { rest, sub } = subcommand(args)
  if ((program === "mise" || program === "turbo" || program === "nx" || program === "moon") && sub === "run") {
    ;({ rest, sub } = subcommand(rest))
  }
  if (program === "nx" && sub !== undefined && sub.includes(":")) return scriptKind(sub.split(":")[1] ?? "")
  if (program === "nx" && (sub === "affected" || sub === "run-many")) {
    const target = rest.find((a) => a.startsWith("--target=") || a.startsWith("-t="))
    return target === undefined ? "test" : scriptKind(target.split("=")[1] ?? "")
  }
  if (sub === undefined) return program === "make" || program === "gmake" ? "build" : undefined
  return scriptKind(sub)
}

/** A subcommand table from an object literal (a `Map`, so `constructor` and the like never match). */
const kinds = (o: Readonly<Record<string, VerificationKind>>): ReadonlyMap<string, VerificationKind> =>
  new Map(Object.entries(o))

const MAVEN = kinds({ test: "test", verify: "test", package: "build", compile: "build", install: "build" })
const GRADLE = kinds({ test: "test", check: "test", build: "build", assemble: "build" })

/** Programs whose first subcommand decides, and what each subcommand checks. */
const SUBCOMMANDS: ReadonlyMap<string, ReadonlyMap<string, VerificationKind>> = new Map([
  ["go", kinds({ test: "test", vet: "lint", build: "build" })],
  [
    "cargo",
    kinds({
      test: "test",
      t: "test",
      nextest: "test",
      clippy: "lint",
      build: "build",
      b: "build",
      check: "typecheck",
      c: "typecheck"
    })
  ],
  ["dotnet", kinds({ test: "test", build: "build" })],
  ["swift", kinds({ test: "test", build: "build" })],
  ["deno", kinds({ test: "test", lint: "lint", check: "typecheck" })],
  ["mvn", MAVEN],
  ["mvnw", MAVEN],
  ["gradle", GRADLE],
  ["gradlew", GRADLE],
  ["biome", kinds({ check: "lint", lint: "lint", ci: "lint" })],
  ["ruff", kinds({ check: "lint" })],
  ["golangci-lint", kinds({ run: "lint" })],
  ["playwright", kinds({ test: "test" })],
  ["cypress", kinds({ run: "test" })],
  ["zig", kinds({ build: "build", test: "test" })],
  ["bazel", kinds({ test: "test", build: "build" })],
  ["mix", kinds({ test: "test", compile: "build" })],
  ["stack", kinds({ test: "test", build: "build" })],
  ["cabal", kinds({ test: "test", build: "build" })],
  ["flutter", kinds({ test: "test", analyze: "lint" })],
  ["dart", kinds({ test: "test", analyze: "lint" })]
])

/** Programs that are a check whatever their arguments (a version or help request aside). */
const ALWAYS: ReadonlyMap<string, VerificationKind> = new Map([
  ["vitest", "test"],
  ["jest", "test"],
  ["mocha", "test"],
  ["ava", "test"],
  ["tap", "test"],
  ["karma", "test"],
  ["pytest", "test"],
  ["py.test", "test"],
  ["tox", "test"],
  ["nox", "test"],
  ["rspec", "test"],
  ["phpunit", "test"],
  ["ctest", "test"],
  ["bats", "test"],
  ["tsc", "typecheck"],
  ["vue-tsc", "typecheck"],
  ["mypy", "typecheck"],
  ["pyright", "typecheck"],
  ["eslint", "lint"],
  ["oxlint", "lint"],
  ["pylint", "lint"],
  ["flake8", "lint"],
  ["shellcheck", "lint"],
  ["rubocop", "lint"],
  ["stylelint", "lint"],
  ["hadolint", "lint"],
  ["staticcheck", "lint"],
  ["ktlint", "lint"],
  ["swiftlint", "lint"]
])

/** Python modules run with `python -m` that are checks. */
const PYTHON_MODULES: ReadonlyMap<string, VerificationKind> = new Map([
  ["pytest", "test"],
  ["unittest", "test"],
  ["mypy", "typecheck"],
  ["pyright", "typecheck"],
  ["ruff", "lint"],
  ["pylint", "lint"],
  ["flake8", "lint"],
  ["tox", "test"],
  ["compileall", "build"]
])

/** Prefixes that run the command after them: `env`, `time`, `timeout 60`, `npx`, `uv run`… (how many words to drop). */
const prefixLength = (words: ReadonlyArray<string>): number => {
  const w = basename(words[0] ?? "")
  const next = words[1] ?? ""
  switch (w) {
    case "env": {
      let i = 1
      while (i < words.length && ((words[i] ?? "").startsWith("-") || isAssignment(words[i] ?? ""))) i++
      return i
    }
    case "time":
    case "nice":
    case "nohup":
    case "command":
    case "exec":
    case "sudo":
    case "xvfb-run":
    case "caffeinate":
    case "dotenv":
    case "npx":
    case "bunx":
    case "pnpx": {
      let i = 1
      while (i < words.length && (words[i] ?? "").startsWith("-")) i++
      if ((w === "dotenv" || w === "npx") && words[i] === "--") i++
      return i
    }
    case "timeout":
    case "gtimeout": {
      let i = 1
      while (i < words.length && (words[i] ?? "").startsWith("-")) i++
      return i + 1
    }
    case "uv":
    case "poetry":
    case "pipenv":
    case "hatch":
    case "pdm":
    case "rye":
      return next === "run" ? 2 : 0
    case "bundle":
      return next === "exec" ? 2 : 0
    case "mise":
      return next === "exec" || next === "x" ? Math.max(2, words.indexOf("--") + 1) : 0
    default:
      return 0
  }
}

const isAssignment = (w: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*=/u.test(w)

const basename = (w: string): string => {
  const slash = w.lastIndexOf("/")
  const b = slash === -1 ? w : w.slice(slash + 1)
  return b.endsWith(".exe") || b.endsWith(".cmd") || b.endsWith(".bat") ? b.slice(0, -4) : b
}

/** The kind of one simple command given as words (prefixes, assignments and wrappers resolved). */
const classifyWords = (input: ReadonlyArray<string>): VerificationKind | undefined => {
  let words = input
  for (let guard = 0; guard < 8; guard++) {
    let i = 0
    while (i < words.length && isAssignment(words[i] ?? "")) i++
    words = words.slice(i)
    const drop = prefixLength(words)
    if (drop === 0) break
    words = words.slice(drop)
  }
  const first = words[0]
  if (first === undefined) return undefined
  const program = basename(first)
  const args = words.slice(1)
  if (asksForHelp(args)) return undefined
  // A shell wrapper: `bash -lc 'npm test'` classifies the script it runs.
  if (program === "bash" || program === "sh" || program === "zsh" || program === "dash") {
    const c = args.findIndex((a) => /^-[a-z]*c[a-z]*$/u.test(a))
    const script = c === -1 ? undefined : args[c + 1]
    return script === undefined ? undefined : classifyLine(script)
  }
  if (program === "npm" || program === "pnpm" || program === "yarn" || program === "bun") {
    return program === "bun" && args[0] === "x" ? classifyWords(args.slice(1)) : packageManager(program, args)
  }
  if (
    program === "make" || program === "gmake" || program === "mise" || program === "just" || program === "task" ||
    program === "rake" || program === "nx" || program === "turbo" || program === "moon"
  ) {
    return taskRunner(program, args)
  }
  if (/^python[0-9.]*$/u.test(program) || program === "py") {
    const m = args.indexOf("-m")
    const mod = m === -1 ? undefined : args[m + 1]
    return mod === undefined ? undefined : PYTHON_MODULES.get(mod)
  }
  if (program === "prettier" || program === "black" || program === "isort" || program === "gofmt") {
    return args.some((a) => a === "--check" || a === "-l" || a === "--diff") ? "lint" : undefined
  }
  if (program === "cargo" && args[0] === "fmt") return args.includes("--check") ? "lint" : undefined
  if (program === "ruff" && args[0] === "format") return args.includes("--check") ? "lint" : undefined
  if (program === "cmake") return args.includes("--build") ? "build" : undefined
  const always = ALWAYS.get(program)
  if (always !== undefined) return always
  const table = SUBCOMMANDS.get(program)
  if (table === undefined) return undefined
  const { sub } = subcommand(args)
  return sub === undefined ? undefined : table.get(sub)
}

/** A lexed piece of a command line: a word, or an operator that ends a simple command. */
type Token = { readonly word: string } | { readonly op: "&&" | "||" | ";" | "|" | "&" }

/**
 * Splits a command line the way a POSIX shell does for what the classifier needs: quoted words,
 * backslash escapes, control operators, comments and heredoc bodies (skipped). Redirections are
 * dropped (`2>&1`, `> out.txt`).
 */
const lex = (line: string): Array<Token> => {
  const tokens: Array<Token> = []
  const heredocs: Array<string> = []
  let word = ""
  let inWord = false
  const push = () => {
    if (inWord) tokens.push({ word })
    word = ""
    inWord = false
  }
  let i = 0
  const n = line.length
  while (i < n) {
    const ch = line[i] ?? ""
    if (ch === "'") {
      const end = line.indexOf("'", i + 1)
      word += line.slice(i + 1, end === -1 ? n : end)
      inWord = true
      i = end === -1 ? n : end + 1
      continue
    }
    if (ch === "\"") {
      let j = i + 1
      while (j < n && line[j] !== "\"") {
        if (line[j] === "\\" && j + 1 < n) j++
        word += line[j] ?? ""
        j++
      }
      inWord = true
      i = j + 1
      continue
    }
    if (ch === "\\" && i + 1 < n) {
      if (line[i + 1] !== "\n") {
        word += line[i + 1] ?? ""
        inWord = true
      }
      i += 2
      continue
    }
    if (ch === "#" && !inWord) {
      while (i < n && line[i] !== "\n") i++
      continue
    }
    if (ch === "\n") {
      push()
      tokens.push({ op: ";" })
      i++
      // Heredoc bodies follow the line that opened them: skip them up to their delimiters.
      while (heredocs.length > 0 && i < n) {
        const eol = line.indexOf("\n", i)
        const text = line.slice(i, eol === -1 ? n : eol).trim()
        i = eol === -1 ? n : eol + 1
        if (text === heredocs[0]) heredocs.shift()
      }
      continue
    }
    if (ch === " " || ch === "\t" || ch === "\r") {
      push()
      i++
      continue
    }
    if (ch === "<" && line[i + 1] === "<" && line[i + 2] !== "<") {
      push()
      i += 2
      if (line[i] === "-") i++
      while (line[i] === " ") i++
      let delim = ""
      while (i < n && !/[\s;&|<>]/u.test(line[i] ?? "")) {
        const c = line[i] ?? ""
        if (c !== "'" && c !== "\"") delim += c
        i++
      }
      if (delim.length > 0) heredocs.push(delim)
      continue
    }
    if (ch === ">" || ch === "<") {
      // A redirection: drop the file descriptor before it and the target after it.
      if (inWord && /^\d+$/u.test(word)) {
        word = ""
        inWord = false
      } else push()
      i++
      if (line[i] === ">" || line[i] === "&") i++
      while (line[i] === " ") i++
      if (/^\d|-/u.test(line[i] ?? "") && line[i - 1] === "&") {
        i++
        continue
      }
      while (i < n && !/[\s;&|<>]/u.test(line[i] ?? "")) i++
      continue
    }
    if (ch === "&" || ch === "|" || ch === ";") {
      push()
      const two = line.slice(i, i + 2)
      if (two === "&&" || two === "||") {
        tokens.push({ op: two })
        i += 2
      } else {
        tokens.push({ op: ch })
        i++
      }
      continue
    }
    if (ch === "(" || ch === ")" || ch === "{" && !inWord || ch === "}" && !inWord) {
      push()
      tokens.push({ op: ";" })
      i++
      continue
    }
    word += ch
    inWord = true
    i++
  }
  push()
  return tokens
}

/** Shell keywords that introduce the command after them (`if npm test; then …`). */
const KEYWORDS: ReadonlySet<string> = new Set(["if", "then", "else", "elif", "do", "while", "until", "!"])

/** The kind of a whole command line: the first simple command (pipeline heads only) that is a check. */
const classifyLine = (line: string): VerificationKind | undefined => {
  const tokens = lex(line.length > MAX_CLASSIFIED_CHARS ? line.slice(0, MAX_CLASSIFIED_CHARS) : line)
  let words: Array<string> = []
  let inPipeTail = false
  let found: VerificationKind | undefined
  const flush = () => {
    if (!inPipeTail && words.length > 0 && found === undefined) {
      let k = 0
      while (k < words.length && KEYWORDS.has(words[k] ?? "")) k++
      found = classifyWords(words.slice(k))
    }
    words = []
  }
  for (const t of tokens) {
    if ("word" in t) {
      words.push(t.word)
      continue
    }
    flush()
    inPipeTail = t.op === "|"
  }
  flush()
  return found
}

/**
 * What a shell command line checks — `"test"`, `"lint"`, `"typecheck"` or `"build"` — or
 * `undefined` when it runs none of them (docs/explain.md#verification-commands lists the table).
 */
export const classifyVerificationCommand = (command: string): VerificationKind | undefined => classifyLine(command)

/** Whether a shell command line runs a test, lint, type-check or build. */
export const isVerificationCommand = (command: string): boolean => classifyLine(command) !== undefined
