/**
 * `WorkspaceGit` on throw-away Git repositories: the status and diff of the work tree, a diff
 * cut at 8 KiB, a directory outside any repository described rather than raised, git left
 * read-only (no index lock, index unchanged), and the HTML section that shows the snapshot
 * escaped, redacted and marked as not evidence.
 */
import { assert, describe, it } from "@effect/vitest"
import { renderHtml } from "@logbook/projections"
import { emptyExplanationModel, tempDir } from "@logbook/testkit"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { filterOverrides, GIT_SAFETY_OPTIONS, gitEnvironment, WorkspaceGit } from "../../src/explain/WorkspaceGit.ts"

const gitIn = (dir: string, ...args: Array<string>) =>
  execFileSync("git", ["-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    encoding: "utf8"
  })

const repo = Effect.gen(function*() {
  const dir = yield* tempDir("workspace-git")
  gitIn(dir, "init", "-q")
  fs.writeFileSync(path.join(dir, "a.ts"), "export const a = 1\n")
  gitIn(dir, "add", "a.ts")
  gitIn(dir, "commit", "-q", "-m", "init")
  return dir
})

const snapshot = (dir: string) =>
  Effect.gen(function*() {
    const git = yield* WorkspaceGit
    return yield* git.snapshot(dir)
  }).pipe(Effect.provide(WorkspaceGit.layerNode))

const emptyModel = emptyExplanationModel()

describe("WorkspaceGit", () => {
  it.effect("reads the status and diff of the work tree without touching the index", () =>
    Effect.gen(function*() {
      const dir = yield* repo
      fs.writeFileSync(path.join(dir, "a.ts"), "export const a = 2 // password=hunter2 </pre><script>x</script>\n")
      fs.writeFileSync(path.join(dir, "new.ts"), "new\n")
      const index = fs.readFileSync(path.join(dir, ".git", "index"))
      const s = yield* snapshot(dir)
      assert.isNull(s.unavailable)
      assert.include(s.status, " M a.ts")
      assert.include(s.status, "?? new.ts")
      assert.include(s.diff, "+export const a = 2")
      assert.isFalse(s.truncated)
      assert.deepStrictEqual(fs.readFileSync(path.join(dir, ".git", "index")), index)
      assert.isFalse(fs.existsSync(path.join(dir, ".git", "index.lock")))
      const html = renderHtml(emptyModel, { workspace: s })
      assert.include(html, "Current workspace (not evidence)")
      assert.include(html, "not evidence of what the agent did")
      assert.include(html, "+export const a = 2")
      assert.notInclude(html, "hunter2")
      assert.notInclude(html, "<script>")
      assert.include(html, "&lt;/pre&gt;")
    }), 60_000)

  it.effect("cuts a large diff at 8 KiB and says so", () =>
    Effect.gen(function*() {
      const dir = yield* repo
      fs.writeFileSync(path.join(dir, "a.ts"), "export const big = 1\n".repeat(2000))
      const s = yield* snapshot(dir)
      assert.isNull(s.unavailable)
      assert.isTrue(s.truncated)
      assert.isAtMost(s.diff.length, 8192)
      assert.include(renderHtml(emptyModel, { workspace: s }), "Diff cut at the capture bound.")
    }), 60_000)

  it.effect("describes a directory outside any repository instead of failing", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("workspace-nogit")
      const s = yield* snapshot(dir)
      assert.isNotNull(s.unavailable)
      assert.include(renderHtml(emptyModel, { workspace: s }), "Workspace snapshot unavailable")
    }), 60_000)

  it("a report without a snapshot has no workspace section", () => {
    assert.notInclude(renderHtml(emptyModel), "Current workspace")
  })
})

describe("WorkspaceGit against a planted repository", () => {
  it.effect(
    "runs no fsmonitor, textconv, filter, external diff or hook the repository configured",
    () =>
      Effect.gen(function*() {
        const dir = yield* repo
        const markers = yield* tempDir("workspace-markers")
        const plant = (name: string) => `touch ${JSON.stringify(path.join(markers, name))}; cat`
        gitIn(dir, "config", "core.fsmonitor", `touch ${JSON.stringify(path.join(markers, "fsmonitor"))}; true`)
        gitIn(dir, "config", "diff.evil.textconv", plant("textconv"))
        gitIn(dir, "config", "diff.evil.command", plant("extdiff"))
        gitIn(dir, "config", "filter.evil.clean", plant("clean"))
        gitIn(dir, "config", "filter.evil.process", plant("process"))
        fs.mkdirSync(path.join(dir, "hooks"))
        fs.writeFileSync(path.join(dir, "hooks", "post-index-change"), `#!/bin/sh\n${plant("hook")}\n`, { mode: 0o755 })
        gitIn(dir, "config", "core.hooksPath", path.join(dir, "hooks"))
        fs.writeFileSync(path.join(dir, ".gitattributes"), "* diff=evil filter=evil\n")
        fs.writeFileSync(path.join(dir, "a.ts"), "export const a = 3\n")
        const s = yield* Effect.gen(function*() {
          const git = yield* WorkspaceGit
          return yield* git.snapshot(dir)
        }).pipe(Effect.provide(WorkspaceGit.layerNode))
        assert.isNull(s.unavailable)
        assert.include(s.diff, "+export const a = 3")
        assert.deepStrictEqual(fs.readdirSync(markers), [])
      }),
    60_000
  )

  it("drops every GIT_* variable of the environment and names each filter driver to empty", () => {
    const env = gitEnvironment({ PATH: "/bin", GIT_DIR: "/elsewhere", git_external_diff: "x", HOME: "/h" })
    assert.deepStrictEqual(env, { PATH: "/bin", HOME: "/h", GIT_OPTIONAL_LOCKS: "0", GIT_TERMINAL_PROMPT: "0" })
    assert.deepStrictEqual(filterOverrides("filter.lfs.clean\nfilter.lfs.smudge\nfilter.a.b.process\n"), [
      "-c",
      "filter.lfs.clean=",
      "-c",
      "filter.lfs.smudge=",
      "-c",
      "filter.lfs.process=",
      "-c",
      "filter.a.b.clean=",
      "-c",
      "filter.a.b.smudge=",
      "-c",
      "filter.a.b.process="
    ])
    assert.isUndefined(filterOverrides("filter.x=y.clean\n"))
    for (const option of ["core.fsmonitor=false", "core.hooksPath=/dev/null"]) {
      assert.include(GIT_SAFETY_OPTIONS, option)
    }
  })
})
