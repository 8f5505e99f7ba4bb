/**
 * The verification classifier against a table of real-world command lines: what agents ran in
 * the imported sessions and the usual spellings of each ecosystem, and the look-alikes that
 * mention a check without running one.
 */
import { assert, describe, it } from "@effect/vitest"
import type { VerificationKind } from "../../src/explain/Explanation.ts"
import {
  classifyVerificationCommand,
  isVerificationCommand,
  MAX_CLASSIFIED_CHARS
} from "../../src/explain/Explanation.ts"

const checks: ReadonlyArray<readonly [string, VerificationKind]> = [
  ["npm test", "test"],
  ["npm t", "test"],
  ["npm run test", "test"],
  ["npm run test:unit -- --run", "test"],
  ["npm run lint", "lint"],
  ["npm run typecheck", "typecheck"],
  ["npm run build", "build"],
  ["npm --prefix web run build", "build"],
  ["npm -w packages/api test", "test"],
  ["pnpm test", "test"],
  ["pnpm -r test", "test"],
  ["pnpm --filter web lint", "lint"],
  ["pnpm run type-check", "typecheck"],
  ["pnpm exec vitest run", "test"],
  ["yarn test", "test"],
  ["yarn lint", "lint"],
  ["yarn build", "build"],
  ["yarn workspace @acme/api test", "test"],
  ["bun test", "test"],
  ["bun run typecheck", "typecheck"],
  ["bun x tsc --noEmit", "typecheck"],
  ["vitest", "test"],
  ["npx vitest run packages/domain/test/a.test.ts", "test"],
  ["./node_modules/.bin/jest --ci", "test"],
  ["npx jest src/a.test.ts", "test"],
  ["npx tsc -b", "typecheck"],
  ["tsc --noEmit -p tsconfig.json", "typecheck"],
  ["npx eslint --fix src/a.ts", "lint"],
  ["eslint .", "lint"],
  ["npx prettier --check .", "lint"],
  ["biome check src", "lint"],
  ["pytest", "test"],
  ["pytest -x tests/test_api.py", "test"],
  ["python -m pytest -q", "test"],
  ["python3 -m unittest discover", "test"],
  ["uv run pytest tests", "test"],
  ["poetry run mypy src", "typecheck"],
  ["mypy .", "typecheck"],
  ["ruff check .", "lint"],
  ["ruff format --check .", "lint"],
  ["tox -e py312", "test"],
  ["go test ./...", "test"],
  ["go test -race -count=1 ./internal/...", "test"],
  ["go vet ./...", "lint"],
  ["go build ./cmd/app", "build"],
  ["golangci-lint run", "lint"],
  ["cargo test", "test"],
  ["cargo test --workspace", "test"],
  ["cargo clippy --all-targets -- -D warnings", "lint"],
  ["cargo build --release", "build"],
  ["cargo check", "typecheck"],
  ["cargo fmt --check", "lint"],
  ["cargo nextest run", "test"],
  ["make test", "test"],
  ["make check", "test"],
  ["make -j 4 build", "build"],
  ["make", "build"],
  ["mise run test", "test"],
  ["mise run lint", "lint"],
  ["just test", "test"],
  ["task test", "test"],
  ["mvn test", "test"],
  ["mvn -q verify", "test"],
  ["./mvnw -pl core test", "test"],
  ["gradle test", "test"],
  ["./gradlew build", "build"],
  ["dotnet test", "test"],
  ["dotnet build src/App.csproj", "build"],
  ["swift test", "test"],
  ["deno test -A", "test"],
  ["bundle exec rspec spec/models", "test"],
  ["rake test", "test"],
  ["cd packages/api && npm test", "test"],
  ["cd web; pnpm build", "build"],
  ["mise run test && mise run lint", "test"],
  ["go test ./cmd/entire/cli/... -count=1 -v -run \"Concurrent|EmptyBaseCommit\" 2>&1 | head -100", "test"],
  ["mise run test 2>&1 | tail -30", "test"],
  ["CI=1 npm test", "test"],
  ["NODE_OPTIONS=--max-old-space-size=4096 FORCE_COLOR=0 npx vitest run", "test"],
  ["env RUST_BACKTRACE=1 cargo test", "test"],
  ["time go test ./...", "test"],
  ["timeout 300 pytest", "test"],
  ["bash -lc 'cd /repo && npm test'", "test"],
  ["bash -lc \"go test ./...\"", "test"],
  ["sh -c 'make check'", "test"],
  ["git stash && npm test; git stash pop", "test"],
  ["if npm test; then echo ok; fi", "test"],
  ["npx nx run api:test", "test"],
  ["npx turbo run build", "build"],
  ["cmake --build build", "build"],
  ["npm install && npm run build", "build"]
]

const lookAlikes: ReadonlyArray<string> = [
  "echo npm test",
  "cat test.go",
  "grep -rn test src",
  "grep test",
  "rg \"go test\" docs",
  "ls test",
  "cat package.json | grep test",
  "git commit -m \"npm test passes\"",
  "git log --oneline -- test",
  "vim tests/test_api.py",
  "which pytest",
  "pytest --version",
  "npm --version",
  "go --help",
  "npm install",
  "npm ci",
  "npm run dev",
  "npm start",
  "yarn",
  "pnpm add -D vitest",
  "go run main.go",
  "go mod tidy",
  "cargo run",
  "cargo add serde",
  "make clean",
  "python app.py",
  "python -c 'import test'",
  "node scripts/test-data.js",
  "test -f package.json",
  "[ -d test ]",
  "mkdir -p test/fixtures",
  "rm -rf build",
  "sed -i s/test/spec/ a.ts",
  "cat > run.sh <<'EOF'\nnpm test\nEOF",
  "find . -name '*.test.ts'",
  "open http://localhost:3000/test",
  "docker build .",
  "npx prettier --write .",
  "ruff format .",
  "# npm test",
  ""
]

describe("the verification classifier", () => {
  it("recognises test, lint, type-check and build commands across ecosystems", () => {
    for (const [command, kind] of checks) {
      assert.strictEqual(classifyVerificationCommand(command), kind, command)
      assert.isTrue(isVerificationCommand(command), command)
    }
  })

  it("rejects commands that only mention a check (echo, cat, grep, commit messages, heredocs)", () => {
    for (const command of lookAlikes) assert.isUndefined(classifyVerificationCommand(command), command)
  })

  it("covers at least 60 command lines", () => {
    assert.isAtLeast(checks.length + lookAlikes.length, 60)
  })

  it("classifies the command after a heredoc body, not the body", () => {
    assert.strictEqual(classifyVerificationCommand("cat > a.txt <<EOF\nmake clean\nEOF\ncargo test"), "test")
  })

  it("reads only the head of a huge command line", () => {
    const huge = `npm test ${"x".repeat(MAX_CLASSIFIED_CHARS * 4)}`
    assert.strictEqual(classifyVerificationCommand(huge), "test")
    assert.isUndefined(classifyVerificationCommand(`${"echo x; ".repeat(MAX_CLASSIFIED_CHARS)}npm test`))
  })
})
