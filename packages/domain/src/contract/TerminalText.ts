/**
 * The terminal sanitiser (docs/security.md#terminal-output): untrusted text printed to a
 * terminal — session ids, paths, facts, snippets, hosts — must never drive it. Every control
 * character other than tab and newline (C0, DEL, C1) and every bidirectional override is shown
 * as a visible escape, so an ESC-initiated CSI, OSC (clipboard writes, hyperlinks, titles) or DCS
 * sequence arrives as inert text such as `\x1b]52;c;…`. Pure.
 */

// C0 except \t and \n, DEL, C1, and the Unicode bidirectional embeddings, overrides and isolates.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu

const visible = (c: string): string => {
  const code = c.charCodeAt(0)
  const hex = code.toString(16)
  return code <= 0xff ? `\\x${hex.padStart(2, "0")}` : `\\u${hex.padStart(4, "0")}`
}

/**
 * Text made safe to print on a terminal: each control character except `\t` and `\n` and each
 * bidirectional control becomes a visible escape (`\x1b`, `\x07`, `\x9b`, `\u202e`); everything
 * else, including a literal backslash, is unchanged. Text with nothing to escape is returned as is.
 */
export const terminalSafe = (text: string): string => {
  UNSAFE.lastIndex = 0
  return UNSAFE.test(text) ? text.replace(UNSAFE, visible) : text
}

// What JSON.stringify leaves raw but a terminal may act on: DEL, C1 and bidirectional controls.
const JSON_UNSAFE = /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu

/**
 * JSON text made safe to print on a terminal: DEL, C1 and bidirectional controls (which
 * `JSON.stringify` leaves as they are) become `\u00XX` escapes. The result is the same JSON value;
 * C0 controls are already escaped by `JSON.stringify`.
 */
export const terminalSafeJson = (json: string): string => {
  JSON_UNSAFE.lastIndex = 0
  return JSON_UNSAFE.test(json)
    ? json.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : json
}
