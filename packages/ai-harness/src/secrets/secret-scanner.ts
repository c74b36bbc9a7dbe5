import { childPath } from '../json/check-json.js'
import { asciiLower, isBase64Char, type Needle, needlesOf, type SecretForm } from './secret-forms.js'
import { DEFAULT_VIEW_DEPTH, type Decoding, pendingEscapeAt, type View, ViewPositions, viewsOf } from './text-views.js'

/**
 * Where a secret was found. Never carries the secret itself.
 * `encoding` names the escapings undone and the form found, outermost first, e.g.
 * `'plain'`, `'hex'`, `'json'`, `'url'`, `'url+base64'`, `'json+url'`.
 */
export interface SecretFinding {
  readonly path: string
  readonly encoding: string
}

/** Secrets shorter than this are refused: their encodings would match ordinary text. */
export const MIN_SECRET_LENGTH = 8

/** The text that replaces a secret in tool results and events. */
export const SECRET_MARKER = '[secret]'

export interface SecretScannerOptions {
  /** How many escapings wrapped around each other a scan undoes. Default 4. */
  readonly depth?: number
}

/** A span [start, end) of a text that holds a secret. */
interface Span {
  start: number
  end: number
}

/** Names a match: the escapings undone (`escaped` for a pass that undid them all), then the form. */
const describeMatch = (decodings: readonly Decoding[], form: SecretForm): string =>
  [...decodings.map((d) => (d === 'all' || d === 'all-form' ? 'escaped' : d)), ...(form === 'plain' ? [] : [form])].join('+') || 'plain'

function safeJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}

function indexesOf(haystack: string, needle: string, from = 0): number[] {
  const found: number[] = []
  for (let at = haystack.indexOf(needle, from); at !== -1; at = haystack.indexOf(needle, at + 1)) found.push(at)
  return found
}

/** The text a needle is compared with: the view, or its ASCII-lower-cased copy, made once when needed. */
function haystacksOf(text: string): (needle: Needle) => string {
  let lower: string | undefined
  return (needle) => {
    if (!needle.caseless) return text
    if (lower === undefined) lower = asciiLower(text)
    return lower
  }
}

const NO_NEEDLES: readonly Needle[] = []

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
  readonly #secrets: string[] = []
  #needles: Needle[] = []
  #withForm = false
  #shortest = Number.POSITIVE_INFINITY
  #longest = 0
  /** Needles by their first character, for matching at the end of a growing text. */
  readonly #byFirst = new Map<string, Needle[]>()
  readonly #byFirstCaseless = new Map<string, Needle[]>()
  readonly #depth: number

  constructor(secrets: Iterable<string> = [], options: SecretScannerOptions = {}) {
    this.#depth = options.depth ?? DEFAULT_VIEW_DEPTH
    for (const secret of secrets) this.add(secret)
  }

  /** Adds a secret. Throws a RangeError for secrets shorter than {@link MIN_SECRET_LENGTH}. */
  add(secret: string): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) {
      throw new RangeError(
        `A session secret must be a string of at least ${MIN_SECRET_LENGTH} characters; shorter ones cannot be told apart from ordinary text.`,
      )
    }
    if (this.#secrets.includes(secret)) return
    this.#secrets.push(secret)
    const needles = needlesOf(secret)
    this.#needles = this.#needles.concat(needles)
    if (secret.includes(' ')) this.#withForm = true
    for (const needle of needles) {
      this.#shortest = Math.min(this.#shortest, needle.text.length)
      this.#longest = Math.max(this.#longest, needle.text.length)
      const index = needle.caseless ? this.#byFirstCaseless : this.#byFirst
      const first = needle.text[0] as string
      index.set(first, [...(index.get(first) ?? []), needle])
    }
  }

  /** How many secrets the scanner knows. */
  get size(): number {
    return this.#secrets.length
  }

  /** Whether `secret` is one of the scanner's secrets. */
  has(secret: string): boolean {
    return this.#secrets.includes(secret)
  }

  #views(text: string): View[] {
    return viewsOf(text, { depth: this.#depth, withForm: this.#withForm })
  }

  /** How a secret appears in `text` (see {@link SecretFinding.encoding}), or null. */
  scanText(text: string): string | null {
    if (this.#needles.length === 0 || typeof text !== 'string' || text.length < this.#shortest) return null
    for (const view of this.#views(text)) {
      const haystack = haystacksOf(view.text)
      for (const needle of this.#needles) {
        if (haystack(needle).includes(needle.text)) return describeMatch(view.decodings, needle.form)
      }
    }
    return null
  }

  /** Whether any secret appears in the JSON text of `value` (keys and numbers included). */
  scanValue(value: unknown): string | null {
    if (this.#needles.length === 0) return null
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

  /** Every span of `text` that holds a secret, widened as {@link Needle.spill} says, merged and sorted. */
  #spans(text: string): Span[] {
    const spans: Span[] = []
    const positions = new ViewPositions(text)
    for (const view of this.#views(text)) {
      const haystackFor = haystacksOf(view.text)
      for (const needle of this.#needles) {
        for (const at of indexesOf(haystackFor(needle), needle.text)) {
          let start = at
          let end = at + needle.text.length
          for (let k = 0; k < needle.spill && isBase64Char(view.text[start - 1]); k++) start--
          for (let k = 0; k < needle.spill && isBase64Char(view.text[end]); k++) end++
          while (view.text[end] === '=') end++
          spans.push({ start: positions.start(view, start), end: positions.end(view, end) })
        }
      }
    }
    spans.sort((a, b) => a.start - b.start)
    const merged: Span[] = []
    for (const span of spans) {
      const last = merged.at(-1)
      if (last && span.start <= last.end) last.end = Math.max(last.end, span.end)
      else merged.push({ ...span })
    }
    return merged
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
      const spans = this.#spans(out)
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
    if (this.#needles.length === 0 || this.scanValue(value) === null) return value
    let out = this.#redactNode(value, keep)
    for (let round = 0; round < 8; round++) {
      const left = this.find(out)
      if (!left) return out as T
      out = this.#replaceAt(out, parsePath(left.path))
    }
    return SECRET_MARKER as T
  }

  /** A copy of `value` with the node at `keys` replaced by the marker; at `<key>`, keys holding a secret are renamed. */
  #replaceAt(node: unknown, keys: ReadonlyArray<string | number>, depth = 0): unknown {
    if (depth === keys.length) return SECRET_MARKER
    const key = keys[depth]!
    if (Array.isArray(node)) return node.map((item, i) => (i === key ? this.#replaceAt(item, keys, depth + 1) : item))
    if (typeof node !== 'object' || node === null) return SECRET_MARKER
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(node)) {
      if (key === '<key>') out[this.scanText(JSON.stringify(k)) === null ? k : SECRET_MARKER] = v
      else out[k] = k === key ? this.#replaceAt(v, keys, depth + 1) : v
    }
    return out
  }

  #redactNode(value: unknown, keep: KeepStructure | undefined): unknown {
    if (typeof value === 'string') return this.redactText(value)
    if (typeof value === 'number') return this.scanValue(value) === null ? value : SECRET_MARKER
    if (typeof value !== 'object' || value === null) return value
    if (Array.isArray(value)) return value.map((item) => this.#redactNode(item, keep?.items))
    const proto = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) return value
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) {
      if (keep?.keys?.has(key) && (typeof inner !== 'object' || inner === null)) {
        out[key] = inner
        continue
      }
      const nested = keep?.nested?.[key] ?? (keep?.deep ? keep : undefined)
      out[keep?.keys ? key : this.redactText(key)] = this.#redactNode(inner, nested)
    }
    return out
  }

  /**
   * For a text that grows (a streamed message): the length of the prefix that is
   * final, that no later characters can turn into part of a secret. Everything from
   * there on may be the start of a secret (or of an escape that would decode to one)
   * and must be held back until more text arrives or the text ends.
   */
  settledLength(text: string): number {
    if (this.#needles.length === 0) return text.length
    const views = this.#views(text)
    const positions = new ViewPositions(text)
    // A text may end in an escape that is not complete yet (`\u00`, `%C3`, `&#x4`): held back, and
    // it may decode to the next character of a needle, so every view is also matched up to it.
    let pendingFrom = text.length
    for (const view of views) {
      const pending = pendingEscapeAt(view.text)
      if (pending !== -1) pendingFrom = Math.min(pendingFrom, positions.start(view, pending))
    }
    let hold = pendingFrom
    const spans: Span[] = []
    // Only the end of a view matters: a partial match is shorter than its needle, and a whole
    // match that a hold could cut through overlaps the last needle's length of the text.
    const tail = this.#longest
    for (const view of views) {
      const t = view.text
      let cutAt = t.length
      if (pendingFrom < text.length) while (cutAt > 0 && positions.start(view, cutAt - 1) >= pendingFrom) cutAt--
      const ends = cutAt === t.length ? [t.length] : [t.length, cutAt]
      const from = Math.max(0, t.length - 2 * tail - 8)
      // Hex ignores case: lower-case only the end that is looked at.
      const lowerFrom = Math.max(0, Math.min(from, cutAt - tail + 1))
      const lowered = asciiLower(t.slice(lowerFrom))
      const haystackOf = (needle: Needle) => (needle.caseless ? { text: lowered, offset: lowerFrom } : { text: t, offset: 0 })
      const widen = (at: number, needle: Needle) => {
        let start = at
        for (let k = 0; k < needle.spill && isBase64Char(t[start - 1]); k++) start--
        return start
      }
      // A partial match at an end: the text there ends with a needle's beginning.
      for (const end of ends) {
        for (let at = Math.max(0, end - tail + 1); at < end; at++) {
          const candidates = [this.#byFirst.get(t[at] as string), this.#byFirstCaseless.get(lowered[at - lowerFrom] as string)]
          for (const needle of candidates.flatMap((list) => list ?? NO_NEEDLES)) {
            const { text: haystack, offset } = haystackOf(needle)
            if (needle.text.length <= end - at || !needle.text.startsWith(haystack.slice(at - offset, end - offset))) continue
            hold = Math.min(hold, positions.start(view, widen(at, needle)))
          }
        }
      }
      // Whole matches near the end: one whose widened cut may still grow holds the text back.
      for (const needle of this.#needles) {
        const { text: haystack, offset } = haystackOf(needle)
        for (const found of indexesOf(haystack, needle.text, Math.max(0, from - offset))) {
          const at = found + offset
          const start = widen(at, needle)
          const matchEnd = at + needle.text.length
          if (needle.spill > 0 && matchEnd + needle.spill + 2 >= t.length) hold = Math.min(hold, positions.start(view, start))
          else spans.push({ start: positions.start(view, start), end: positions.end(view, matchEnd) })
        }
      }
    }
    // Never cut through a whole match: hold back from its start.
    for (let changed = true; changed; ) {
      changed = false
      for (const span of spans) {
        if (span.start < hold && span.end > hold) {
          hold = span.start
          changed = true
        }
      }
    }
    return hold
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
    const spans = this.#spans(settled)
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

/** Which keys of an object hold structure that redaction must not cut (see {@link SecretScanner.redact}). */
export interface KeepStructure {
  /** Keys whose string, number or boolean values are structure. Other keys are not redacted either. */
  readonly keys?: ReadonlySet<string>
  /** How to treat the object under a key. */
  readonly nested?: Readonly<Record<string, KeepStructure>>
  /** How to treat the items of an array. */
  readonly items?: KeepStructure
  /** Apply the same rule at every depth. */
  readonly deep?: boolean
}

/** Parses a path made by `childPath` back into keys. */
function parsePath(path: string): Array<string | number> {
  const keys: Array<string | number> = []
  const first = path.search(/[.[]/)
  if (first === -1) return keys
  const pattern = /\.([A-Za-z_$][A-Za-z0-9_$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/g
  for (const match of path.slice(first).matchAll(pattern)) {
    if (match[1] !== undefined) keys.push(match[1])
    else if (match[2] !== undefined) keys.push(Number(match[2]))
    else keys.push(JSON.parse(match[3]!) as string)
  }
  return keys
}

/**
 * Whether position `index` of a JSON-like text is inside a string literal, starting
 * from `inString` at position `from`. Used to write the marker as a JSON string when
 * it replaces a number, so JSON text stays JSON.
 */
export function insideJsonString(text: string, index: number, from = 0, inString = false): boolean {
  let escaped = false
  for (let i = from; i < index; i++) {
    const c = text[i]
    if (escaped) escaped = false
    else if (c === '\\') escaped = inString
    else if (c === '"') inString = !inString
  }
  return inString
}

/** Replaces `spans` of `text` by the marker; in JSON text, quoted where it stands outside a string. */
function cut(text: string, spans: readonly Span[], json: { inString: boolean } | undefined): string {
  let out = ''
  let last = 0
  let state = json?.inString ?? false
  for (const { start, end } of spans) {
    if (json) state = insideJsonString(text, start, last, state)
    out += text.slice(last, start) + (json && !state ? JSON.stringify(SECRET_MARKER) : SECRET_MARKER)
    if (json) state = insideJsonString(text, end, start, state)
    last = end
  }
  return out + text.slice(last)
}
