/**
 * The terminal sanitiser: escape sequences an attacker can plant in recorded text (OSC 52
 * clipboard writes, OSC 8 links, clear-screen, title changes, C1 CSI) come out as visible,
 * inert text; tab, newline and ordinary Unicode pass unchanged.
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import { terminalSafe, terminalSafeJson } from "../../src/contract/TerminalText.ts"

const OSC52 = "\u001b]52;c;ZWNobyBwd25lZA==\u0007"
const OSC8 = "\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\"
const CLEAR = "\u001b[2J\u001b[H"
const TITLE = "\u001b]0;owned\u0007"

describe("TerminalText", () => {
  it("shows an OSC 52 clipboard write as visible text", () => {
    assert.strictEqual(terminalSafe(`id-${OSC52}`), "id-\\x1b]52;c;ZWNobyBwd25lZA==\\x07")
  })

  it("shows OSC 8 links, clear-screen and title changes without any ESC left", () => {
    for (const payload of [OSC8, CLEAR, TITLE, "\u009b31m", "a\rb", "\u007f", "\u202eevil"]) {
      const out = terminalSafe(payload)
      assert.notMatch(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u)
    }
    assert.strictEqual(terminalSafe(CLEAR), "\\x1b[2J\\x1b[H")
    assert.strictEqual(terminalSafe("\u009b"), "\\x9b")
    assert.strictEqual(terminalSafe("\u202e"), "\\u202e")
  })

  it("keeps tab, newline, backslashes and ordinary Unicode as they are", () => {
    const text = "a\tb\nc \\x1b é 日本 🙂"
    assert.strictEqual(terminalSafe(text), text)
  })

  it("escapes what JSON.stringify leaves raw and keeps the same JSON value", () => {
    const value = { id: `x\u009b${OSC52}\u202e` }
    const json = terminalSafeJson(JSON.stringify(value))
    assert.notMatch(json, /[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/u)
    assert.deepStrictEqual(JSON.parse(json), value)
  })

  it.prop("never leaves a control character other than tab and newline", [Schema.String], ([text]) => {
    assert.notMatch(terminalSafe(text), /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u)
  })
})
