import { childPath } from '../json/check-json.js'
import { cut, insideJsonString, type KeepStructure, redactNode, replaceAt, SECRET_MARKER } from './secret-cuts.js'
import { MIN_SECRET_LENGTH, SecretNeedles } from './secret-needles.js'
import { settledLength } from './secret-settle.js'
import { DEFAULT_VIEW_DEPTH } from './text-views.js'

export { insideJsonString, type KeepStructure, MIN_SECRET_LENGTH, SECRET_MARKER }

/**
 * Where a secret was found. Never carries the secret itself.
 * `encoding` names the escapings undone and the form found, outermost first, e.g.
 * `'plain'`, `'hex'`, `'json'`, `'url'`, `'url+base64'`, `'json+url'`.
 */
export interface SecretFinding {
  readonly path: string
  readonly encoding: string
}

export interface SecretScannerOptions {
  /** How many escapings wrapped around each other a scan undoes. Default 4. */
  readonly depth?: number
}

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

/**
 * Finds the secrets of a session in text and in JSON values, and cuts them out.
 *
 * A secret is found in any of these forms: as is; its UTF-8 bytes in hex (either case);
 * in base64 or base64url, padded or not, alone or at any offset inside a larger blob
 * (also the base64 of its JSON-escaped or URL-encoded form); and any of these inside
 * up to `depth` escapings wrapped around each other: JSON string escapes (`\"`, `\\`,
 * `\/`, `\n`, `\uXXXX` of any character, either hex case), percent-encoding of any byte
 * (`encodeURIComponent`, `encodeURI`, either hex case), form encoding (`+` for a space),
 * HTML character references, and line breaks (wrapped base64). A JSON value is scanned
 * as its JSON text, so keys and numbers count too.
 *
 * Build one per session and reuse it: each secret's forms are computed once.
 */
export class SecretScanner {
  /** The secrets' forms and the views of a text they are looked for in (secret-needles.ts). */
  readonly #needles: SecretNeedles

  constructor(secrets: Iterable<string> = [], options: SecretScannerOptions = {}) {
    this.#needles = new SecretNeedles(options.depth ?? DEFAULT_VIEW_DEPTH)
    for (const secret of secrets) this.add(secret)
  }

  /** Adds a secret. Throws a RangeError for secrets shorter than {@link MIN_SECRET_LENGTH}. */
  add(secret: string): void {
    this.#needles.add(secret)
  }

  /** How many secrets the scanner knows. */
  get size(): number {
    return this.#needles.size
  }

  /** Whether `secret` is one of the scanner's secrets. */
  has(secret: string): boolean {
    return this.#needles.has(secret)
  }

  /** How a secret appears in `text` (see {@link SecretFinding.encoding}), or null. */
  scanText(text: string): string | null {
    return this.#needles.scanText(text)
  }

  /** Whether any secret appears in the JSON text of `value` (keys and numbers included). */
  scanValue(value: unknown): string | null {
    if (this.#needles.size === 0) return null
    if (typeof value === 'string') return this.scanText(value)
    const json = safeJson(value)
    return json === undefined ? null : this.scanText(json)
  }

  /**
   * The first place a secret appears in a JSON value, or null. The value is scanned as
   * its JSON text, so object keys (reported as `<key>`) and numbers count too.
   */
  find(value: unknown, root = '$'): SecretFinding | null {
    const encoding = this.scanValue(value)
    if (encoding === null) return null
    let path = root
    let node: unknown = value
    let found = encoding
    // Go down to the deepest node that holds the secret on its own.
    descend: for (;;) {
      if (typeof node !== 'object' || node === null) break
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) {
          const inner = this.scanValue(node[i])
          if (inner !== null) {
            path = childPath(path, i)
            node = node[i]
            found = inner
            continue descend
          }
        }
        break
      }
      for (const [key, inner] of Object.entries(node)) {
        const inKey = this.scanText(JSON.stringify(key))
        if (inKey !== null) return { path: childPath(path, '<key>'), encoding: inKey }
        const inValue = this.scanValue(inner)
        if (inValue !== null) {
          path = childPath(path, key)
          node = inner
          found = inValue
          continue descend
        }
      }
      break
    }
    return { path, encoding: found }
  }

  /**
   * Replaces every secret in a string by {@link SECRET_MARKER}, in whatever form it
   * appears; the rest of the text stays. A string that is a JSON object or array is
   * redacted as JSON, so it stays valid JSON. If a secret would survive the cut (it
   * spans escapes in a way no single cut removes), the whole string becomes the marker.
   */
  redactText(text: string): string {
    if (this.scanText(text) === null) return text
    const trimmed = text.trimStart()
    if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
      let parsed: unknown
      let isJson = false
      try {
        parsed = JSON.parse(text)
        isJson = true
      } catch {
        // Not JSON after all: cut the spans out of the text.
      }
      if (isJson) return JSON.stringify(this.redact(parsed))
    }
    const json = trimmed.startsWith('{') || trimmed.startsWith('[') ? { inString: false } : undefined
    let out = text
    for (let round = 0; round < 3; round++) {
      const spans = this.#needles.spans(out)
      if (spans.length === 0) break
      out = cut(out, spans, json)
      if (this.scanText(out) === null) return out
    }
    return SECRET_MARKER
  }

  /**
   * For structure (an id or a name) made up by someone else, such as a tool name the
   * model invented: never cut, so either kept as it is or replaced whole by the marker.
   */
  redactWhole(text: string): string {
    return this.scanText(text) === null ? text : SECRET_MARKER
  }

  /**
   * A deep copy of a JSON-like value with every secret replaced by the marker: in
   * strings, in object keys, and in numbers (a number holding a secret becomes the
   * marker string). Keys listed in `keep` hold structure (ids, names, roles, types):
   * their string values are not cut. Anything a cut could not remove, structure
   * included, is replaced whole, so the result never holds a secret.
   */
  redact<T>(value: T, keep?: KeepStructure): T {
    if (this.#needles.size === 0 || this.scanValue(value) === null) return value
    let out = redactNode(this, value, keep)
    for (let round = 0; round < 8; round++) {
      const left = this.find(out)
      if (!left) return out as T
      out = replaceAt(this, out, left.path)
    }
    return SECRET_MARKER as T
  }

  /**
   * For a text that grows (a streamed message): the length of the prefix that is
   * final, that no later characters can turn into part of a secret. Everything from
   * there on may be the start of a secret (or of an escape that would decode to one)
   * and must be held back until more text arrives or the text ends.
   */
  settledLength(text: string): number {
    return settledLength(this.#needles, text)
  }

  /**
   * The characters `[from, to)` of a growing text with its secrets cut out, where `to`
   * is at most {@link settledLength} of the text so far and everything before `from`
   * was given out already. `json` keeps a JSON text JSON (the marker is quoted outside
   * strings); its `inString` is the state at `from`.
   */
  redactSettled(text: string, from: number, to: number, json?: { inString: boolean }): string {
    const settled = text.slice(0, to)
    if (this.scanText(settled) === null) return settled.slice(from)
    const spans = this.#needles
      .spans(settled)
      .filter((span) => span.end > from)
      .map((span) => ({ start: Math.max(span.start, from), end: span.end }))
    const piece = cut(
      settled.slice(from),
      spans.map((span) => ({ start: span.start - from, end: span.end - from })),
      json,
    )
    // The piece alone must be clean too; if a cut could not make it so, give none of it.
    return this.scanText(piece) === null ? piece : SECRET_MARKER
  }
}
