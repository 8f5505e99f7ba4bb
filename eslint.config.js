// Lint and formatting rules for the whole workspace. Formatting is enforced through dprint
// (via @effect/eslint-plugin) so `npm run lint:fix` is the only formatter anyone needs.
// Architecture rules: imports point down (runtime → fleet → projections → store → domain) and
// `domain` stays pure; inside a package, feature folders stay apart (eslint/featureFolders.js).
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"
import featureFolders from "./eslint/featureFolders.js"

const noUpward = (forbidden, extra = []) => ({
  "no-restricted-imports": ["error", {
    patterns: [
      ...forbidden.map((name) => ({
        group: [`@logbook/${name}`, `@logbook/${name}/*`],
        message: "imports only point down: runtime → fleet → projections → store → domain"
      })),
      { group: ["@logbook/*/src/*", "@logbook/*/dist/*"], message: "import packages only through their index" },
      ...extra
    ]
  }]
})

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", ".tsbuild/**", "**/*.d.ts"] },
  ...tseslint.configs.recommended,
  ...effect.configs.dprint,
  {
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-namespace": "off"
    }
  },
  {
    files: ["packages/domain/src/**/*.ts"],
    rules: noUpward(["store", "projections", "fleet", "runtime"], [
      { group: ["node:*", "fs", "path", "child_process", "os"], message: "domain is pure: no I/O" },
      { group: ["@effect/platform-node", "@effect/platform-node/*"], message: "domain is pure: no platform layers" }
    ])
  },
  {
    files: ["packages/*/src/**/*.ts"],
    plugins: { logbook: featureFolders },
    rules: { "logbook/feature-folders": "error" }
  },
  { files: ["packages/store/src/**/*.ts"], rules: noUpward(["projections", "fleet", "runtime"]) },
  { files: ["packages/projections/src/**/*.ts"], rules: noUpward(["fleet", "runtime"]) },
  { files: ["packages/fleet/src/**/*.ts"], rules: noUpward(["runtime"]) },
  {
    files: ["packages/*/src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: "use Clock, not Date.now"
        },
        {
          selector: "CallExpression[callee.object.name='Math'][callee.property.name='random']",
          message: "use an injectable id/random service"
        },
        { selector: "TryStatement", message: "use Effect.try / Effect.tryPromise" },
        {
          selector:
            "FunctionDeclaration[async=true], ArrowFunctionExpression[async=true], FunctionExpression[async=true]",
          message: "no async/await in library code"
        }
      ]
    }
  }
)
