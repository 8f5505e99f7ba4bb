/**
 * The redaction policy's case table (docs/security.md): secret-named keys in every spelling,
 * secrets in text and commands, known token shapes, and look-alikes that must stay as they are;
 * plus a property that a secret embedded anywhere in random text never survives.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { isSecretKey, REDACTED, redactJson, redactSecrets } from "../../src/contract/Redaction.ts"

// Keys: [key, names a secret]
const KEYS: ReadonlyArray<readonly [string, boolean]> = [
  ["password", true],
  ["DB_PASSWORD", true],
  ["PGPASSWORD", true],
  ["dbPassword", true],
  ["AWS_SECRET_ACCESS_KEY", true],
  ["GITHUB_TOKEN", true],
  ["OPENAI_API_KEY", true],
  ["X-Api-Key", true],
  ["apiKey", true],
  ["APIKey", true],
  ["api-key", true],
  ["access_token", true],
  ["refreshToken", true],
  ["Client-Secret", true],
  ["SECRET_KEY_BASE", true],
  ["STRIPE_KEY", true],
  ["signingKey", true],
  ["private_key", true],
  ["privateKey", true],
  ["session_key", true],
  ["AccountKey", true],
  ["SharedAccessKey", true],
  ["Authorization", true],
  ["oauth_token", true],
  ["credentials", true],
  ["MYSQL_PWD", true],
  ["passphrase", true],
  ["Cookie", true],
  ["spring.datasource.password", true],
  ["tokens", false],
  ["input_tokens", false],
  ["max_tokens", false],
  ["token_count", false],
  ["token_baseline", false],
  ["tokenBaseline", false],
  ["token_breakdowns", false],
  ["token_total", false],
  ["tokenizer", false],
  ["author", false],
  ["authors", false],
  ["PWD", false],
  ["OLDPWD", false],
  ["key", false],
  ["public_key", false],
  ["sort_key", false],
  ["primary_key", false],
  ["keyboard", false],
  ["monkey", false],
  ["secretary", false],
  ["PASSWORD_FILE", false],
  ["secret_name", false],
  ["session_id", false],
  ["path", false],
  ["type", false]
]

// Text with a secret: [text, the secret that must not survive]
const SECRETS: ReadonlyArray<readonly [string, string]> = [
  ["password=hunter2", "hunter2"],
  ["PGPASSWORD=s3cr3tpw psql -h db", "s3cr3tpw"],
  ["export DB_PASSWORD='correct horse'", "correct horse"],
  ["STRIPE_KEY=abcdef123456 node app.js", "abcdef123456"],
  ["SECRET_KEY_BASE=0a1b2c3d4e5f rails s", "0a1b2c3d4e5f"],
  ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"],
  ["GITHUB_TOKEN: abc123def456", "abc123def456"],
  ["\"api_key\": \"k-123-xyz\"", "k-123-xyz"],
  ["{\"client_secret\":\"quo\\\"ted\"}", "ted"],
  ["X-Api-Key: 9f8e7d6c5b4a", "9f8e7d6c5b4a"],
  ["Authorization: Bearer abcdefghijklmnop.123", "abcdefghijklmnop"],
  ["Authorization: Basic YWRtaW46cGFzc3dvcmQ=", "YWRtaW46cGFzc3dvcmQ"],
  ["curl -H 'Authorization: token 0123456789abcdef' https://api", "0123456789abcdef"],
  ["mysql -u root -pS3cr3t shop", "S3cr3t"],
  ["mariadb -h db -u app -p'p@ss word' app", "p@ss word"],
  ["mysqldump -uroot -pdumpPw1 shop > x.sql", "dumpPw1"],
  ["curl -u admin:Pa55w0rd https://example.com", "Pa55w0rd"],
  ["curl -s --user deploy:Xyz789abc https://x", "Xyz789abc"],
  ["wget --user=me --password=wgetpw https://x", "wgetpw"],
  ["sshpass -p 'pw with space' ssh host", "pw with space"],
  ["sshpass -p hunter22 ssh host", "hunter22"],
  ["app --password hunter2 --verbose", "hunter2"],
  ["app --token=tok_abc_123", "tok_abc_123"],
  ["app --api-key \"ak-zz-99\"", "ak-zz-99"],
  ["docker login --password-stdin --username me; app --auth-token zzz777", "zzz777"],
  [
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=bXlrZXk+Zm9v/YmFy==;EndpointSuffix=core.windows.net",
    "bXlrZXk"
  ],
  [
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0a2V5MTIz=",
    "c2VjcmV0a2V5MTIz"
  ],
  ["https://acct.blob.core.windows.net/c?sv=2020-08-04&sig=AbCdEfGhIjKlMnOpQrStUv%3D", "AbCdEfGhIjKlMnOpQrStUv"],
  ["postgres://app:dbpass99@db.internal:5432/shop", "dbpass99"],
  ["git clone https://user:ghs_notreal@github.com/o/r", "ghs_notreal"],
  ["key AKIAIOSFODNN7EXAMPLE in use", "AKIAIOSFODNN7EXAMPLE"],
  ["ASIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE"],
  ["ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnop"],
  ["gho_abcdefghijklmnopqrstuvwxyz0123", "gho_abcdefghijklmnop"],
  ["ghs_abcdefghijklmnopqrstuvwxyz0123", "ghs_abcdefghijklmnop"],
  ["github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "github_pat_11ABCDEFG"],
  ["sk-abcdefghijklmnopqrstuvwx", "sk-abcdefghijklmnop"],
  ["sk-proj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrst"],
  ["sk-ant-api03-abcdefghijklmnopqrstuvwx", "api03-abcdefghijklmnop"],
  ["sk_live_51Habcdefghijklmnop", "51Habcdefghijklmnop"],
  ["rk_live_51Habcdefghijklmnop", "51Habcdefghijklmnop"],
  ["sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"],
  ["xoxb-1234567890-abcdefghij", "1234567890-abcdefghij"],
  ["xoxp-1234567890-abcdefghij", "1234567890-abcdefghij"],
  ["AIzaSyA1234567890abcdefghijklmnopqrstu", "AIzaSyA1234567890abcdef"],
  ["hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "hf_abcdefghijklmnopqrst"],
  ["glpat-abcdefghijklmnopqrst", "glpat-abcdefghijklmnop"],
  ["npm_abcdefghijklmnopqrstuvwxyz0123456789", "npm_abcdefghijklmnopqrst"],
  [
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "dozjgNryP4J3jVmNHl0w5N"
  ],
  ["-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"],
  ["-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "b3BlbnNzaC1rZXk"],
  ["Cookie: session=abc123xyz", "abc123xyz"],
  ["MYSQL_PWD=pw12345 mysql", "pw12345"],
  ["passphrase: open sesame", "open"],
  ["spring.datasource.password=jdbcpw", "jdbcpw"]
]

// Look-alikes that must come out unchanged.
const LOOK_ALIKES: ReadonlyArray<string> = [
  "PWD=/home/me OLDPWD=/tmp",
  "input_tokens: 5300, output_tokens: 212",
  "max_tokens=4096",
  "token_count: 12",
  "author: Jane Doe",
  "key: value",
  "public_key = ssh-ed25519",
  "sort_key=name",
  "keyboard=us monkey=banana",
  "PASSWORD_FILE=/run/secrets/db",
  "secret_name: db-creds",
  "echo $GITHUB_TOKEN",
  "mysql -u root -p shop",
  "mysql -P 3306 -h db",
  "curl -u admin https://example.com",
  "ssh -p 2222 host",
  "task-abcdefghijklmnopqrstuvwxyz done",
  "disk_live_space is low",
  "Bearer tokens expire after an hour",
  "Basic authentication is disabled",
  "https://example.com/path?q=1",
  "see https://github.com/o/r/issues/34",
  "the password is checked by the server",
  "sk-short",
  "ghp_short",
  "eyJub3QiOiJhIGp3dCJ9 alone",
  "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
  "app --no-password build",
  "app --max-tokens 100",
  "value=12:30 at noon",
  "secretary: Ann",
  "AKIA is a prefix"
]

describe("Redaction policy", () => {
  it("has at least 80 cases in its table", () => {
    assert.isAtLeast(KEYS.length + SECRETS.length + LOOK_ALIKES.length, 80)
  })

  for (const [key, secret] of KEYS) {
    it(`says the key ${JSON.stringify(key)} ${secret ? "names" : "does not name"} a secret`, () => {
      assert.strictEqual(isSecretKey(key), secret)
    })
  }

  for (const [text, secret] of SECRETS) {
    it(`hides ${JSON.stringify(secret)} in ${JSON.stringify(text)}`, () => {
      const out = redactSecrets(text)
      assert.notInclude(out, secret)
      assert.include(out, REDACTED)
      assert.strictEqual(redactSecrets(out), out, "redacting twice changes nothing more")
    })
  }

  for (const text of LOOK_ALIKES) {
    it(`leaves the look-alike ${JSON.stringify(text)} unchanged`, () => {
      assert.strictEqual(redactSecrets(text), text)
    })
  }

  it("replaces the values of secret-named keys in JSON but keeps booleans and null", () => {
    assert.deepStrictEqual(
      redactJson({
        DB_PASSWORD: "p1",
        AWS_SECRET_ACCESS_KEY: "p2",
        GITHUB_TOKEN: "p3",
        OPENAI_API_KEY: "p4",
        "X-Api-Key": "p5",
        has_password: false,
        token: null,
        usage: { input_tokens: 5 }
      }),
      {
        DB_PASSWORD: REDACTED,
        AWS_SECRET_ACCESS_KEY: REDACTED,
        GITHUB_TOKEN: REDACTED,
        OPENAI_API_KEY: REDACTED,
        "X-Api-Key": REDACTED,
        has_password: false,
        token: null,
        usage: { input_tokens: 5 }
      }
    )
  })
})

// The property: secrets of each shape, with a random body, embedded between random words.
const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
const WORDS = [
  "the",
  "build",
  "failed",
  "at",
  "step",
  "3",
  "see",
  "log",
  "ok",
  "retry",
  "npm",
  "run",
  "test",
  "—",
  "(x)"
]
const JOINERS = [" ", "\n", ", ", "; ", " | ", "\t", ": "]

const pick = <A>(items: ReadonlyArray<A>, n: number): A => items[Math.abs(n) % items.length] as A

const bodyOf = (seeds: ReadonlyArray<number>, length: number, alphabet: string): string =>
  Array.from(
    { length },
    (_, i) => alphabet[Math.abs(seeds[i % Math.max(1, seeds.length)] ?? i) * (i + 7) % alphabet.length]
  )
    .join("")

// Each shape: how the secret looks given a random body (the body is what must not survive).
const SHAPES: ReadonlyArray<(body: string) => string> = [
  (b) => `ghp_${b}`,
  (b) => `sk-proj-${b}`,
  (b) => `sk_live_${b}`,
  (b) => `hf_${b}${b}`,
  (b) => `xoxb-${b}`,
  (b) => `AIza${b}${b}`,
  (b) => `AKIA${b.toUpperCase().slice(0, 16).padEnd(16, "Q")}`,
  (b) => `PASSWORD=${b}`,
  (b) => `DB_PASSWORD="${b}"`,
  (b) => `OPENAI_API_KEY=${b}`,
  (b) => `--token ${b}`,
  (b) => `mysql -u root -p${b}`,
  (b) => `curl -u admin:${b} https://example.com`,
  (b) => `sshpass -p ${b} ssh host`,
  (b) => `https://me:${b}@example.com/`,
  (b) => `Authorization: Bearer ${b}9`,
  (b) => `eyJ${b}.eyJ${b}.${b}`
]

describe("Redaction property", () => {
  it.prop(
    "a secret embedded at a random place in random text never survives",
    [Schema.Array(Schema.Int), Schema.Array(Schema.Int), Schema.Array(Schema.Int), Schema.Int],
    ([before, after, seeds, shape]) => {
      const body = bodyOf(seeds, 20 + (Math.abs(shape) % 12), ALNUM)
      const secret = pick(SHAPES, shape)(body)
      const words = (ns: ReadonlyArray<number>) => ns.map((n, i) => pick(WORDS, n) + pick(JOINERS, n + i)).join("")
      const text = `${words(before)}${secret}${pick(JOINERS, shape)}${words(after)}`
      const out = redactSecrets(text)
      assert.notInclude(out, body.slice(0, 16), `from ${JSON.stringify(text)}`)
    },
    { arbitrary: { runs: 500, seed: 34 } }
  )

  it.prop(
    "a secret between arbitrary strings, set apart by a space, never survives",
    [Schema.String, Schema.String, Schema.Array(Schema.Int), Schema.Int],
    ([before, after, seeds, shape]) => {
      const body = bodyOf(seeds, 20 + (Math.abs(shape) % 12), ALNUM)
      const text = `${before} ${pick(SHAPES, shape)(body)} ${after}`
      assert.notInclude(redactSecrets(text), body.slice(0, 16), `from ${JSON.stringify(text)}`)
    },
    { arbitrary: { runs: 500, seed: 34 } }
  )
})
