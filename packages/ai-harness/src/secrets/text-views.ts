/**
 * Views of a text: the text itself, and what it reads as once one or more common
 * escapings are undone (JSON string escapes, percent-encoding, form encoding, HTML
 * character references, line breaks in wrapped base64). A secret hides in a text when
 * one of its encoded forms occurs in one of these views.
 *
 * Each decoder can also say, for every character of its output, which characters of
 * its input it came from, so a match in a view can be cut out of the original text.
 */

/** The escapings a view undoes, in the order they were undone. */
export type Decoding = 'json' | 'url' | 'form' | 'html' | 'lines'

/** For each output character: the input span [start, end) it was decoded from. */
export interface SourceMap {
  readonly starts: Int32Array
  readonly ends: Int32Array
}

export interface View {
  readonly text: string
  readonly decodings: readonly Decoding[]
  /** Maps positions of `text` to the original text; absent for the original itself. */
  readonly map?: SourceMap
}

/** Collects decoded output and, when asked, where each output unit came from. */
class Output {
  #parts: string[] = []
  #length = 0
  #starts: number[] | undefined
  #ends: number[] | undefined

  constructor(withMap: boolean) {
    if (withMap) {
      this.#starts = []
      this.#ends = []
    }
  }

  push(text: string, start: number, end: number, each = false): void {
    if (text === '') return
    this.#parts.push(text)
    this.#length += text.length
    if (!this.#starts || !this.#ends) return
    for (let i = 0; i < text.length; i++) {
      // A literal run maps one to one; a decoded escape maps every unit to the whole escape.
      this.#starts.push(each ? start + i : start)
      this.#ends.push(each ? start + i + 1 : end)
    }
  }

  result(): { text: string; map?: SourceMap } {
    const text = this.#parts.join('')
    if (!this.#starts || !this.#ends) return { text }
    return { text, map: { starts: Int32Array.from(this.#starts), ends: Int32Array.from(this.#ends) } }
  }
}

const JSON_ESCAPE = /\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))/g
const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }

/** Undoes JSON string escapes (`\"`, `\\`, `\/`, `\n`…, `\uXXXX` in either case) wherever they are. */
function decodeJson(text: string, withMap: boolean) {
  const out = new Output(withMap)
  let last = 0
  for (const match of text.matchAll(JSON_ESCAPE)) {
    const at = match.index
    out.push(text.slice(last, at), last, at, true)
    const decoded =
      match[1] !== undefined ? String.fromCharCode(Number.parseInt(match[1], 16)) : (SIMPLE_ESCAPES[match[2] as string] as string)
    out.push(decoded, at, at + match[0].length)
    last = at + match[0].length
  }
  out.push(text.slice(last), last, text.length, true)
  return out.result()
}

const PERCENT_RUN = /(?:%[0-9a-fA-F]{2})+/g
const utf8 = new TextDecoder('utf-8', { fatal: false })

/** Length of the UTF-8 sequence a lead byte starts, or 0 for a byte that cannot lead one. */
function utf8SequenceLength(lead: number): number {
  if (lead < 0x80) return 1
  if (lead >= 0xc2 && lead < 0xe0) return 2
  if (lead >= 0xe0 && lead < 0xf0) return 3
  if (lead >= 0xf0 && lead < 0xf5) return 4
  return 0
}

/** Decodes a run of `%XX` escapes as UTF-8, one character at a time so each maps to its own escapes. */
function pushPercentRun(out: Output, run: string, offset: number): void {
  const bytes = new Uint8Array(run.length / 3)
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16)
  let i = 0
  while (i < bytes.length) {
    let size = utf8SequenceLength(bytes[i]!)
    if (size === 0 || i + size > bytes.length) size = 1
    for (let k = 1; k < size; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) size = 1
    out.push(utf8.decode(bytes.subarray(i, i + size)), offset + i * 3, offset + (i + size) * 3)
    i += size
  }
}

/** Undoes percent-encoding of any byte, in either hex case; with `plusIsSpace`, also form encoding's `+`. */
function decodePercent(text: string, withMap: boolean, plusIsSpace: boolean) {
  const out = new Output(withMap)
  const literal = (from: number, to: number) => {
    if (!plusIsSpace) return out.push(text.slice(from, to), from, to, true)
    const part = text.slice(from, to)
    let last = 0
    for (let i = part.indexOf('+'); i !== -1; i = part.indexOf('+', i + 1)) {
      out.push(part.slice(last, i), from + last, from + i, true)
      out.push(' ', from + i, from + i + 1)
      last = i + 1
    }
    out.push(part.slice(last), from + last, to, true)
  }
  let last = 0
  for (const match of text.matchAll(PERCENT_RUN)) {
    literal(last, match.index)
    pushPercentRun(out, match[0], match.index)
    last = match.index + match[0].length
  }
  literal(last, text.length)
  return out.result()
}

const HTML_REFERENCE = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos));/g
const HTML_NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** Undoes HTML character references: decimal and hex ones, and the five XML entities. */
function decodeHtml(text: string, withMap: boolean) {
  const out = new Output(withMap)
  let last = 0
  for (const match of text.matchAll(HTML_REFERENCE)) {
    const code = match[1] !== undefined ? Number(match[1]) : match[2] !== undefined ? Number.parseInt(match[2], 16) : -1
    if (code > 0x10ffff) continue
    out.push(text.slice(last, match.index), last, match.index, true)
    out.push(
      code >= 0 ? String.fromCodePoint(code) : (HTML_NAMED[match[3] as string] as string),
      match.index,
      match.index + match[0].length,
    )
    last = match.index + match[0].length
  }
  out.push(text.slice(last), last, text.length, true)
  return out.result()
}

/** Drops line breaks, as base64 and hex are wrapped in MIME, PEM and many logs. */
function decodeLines(text: string, withMap: boolean) {
  const out = new Output(withMap)
  let last = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== 10 && c !== 13) continue
    out.push(text.slice(last, i), last, i, true)
    last = i + 1
  }
  out.push(text.slice(last), last, text.length, true)
  return out.result()
}

interface Decoder {
  readonly name: Decoding
  /** Cheap test: can this decoder change the text at all? */
  applies(text: string): boolean
  decode(text: string, withMap: boolean): { text: string; map?: SourceMap }
}

const DECODERS: readonly Decoder[] = [
  { name: 'json', applies: (t) => t.includes('\\'), decode: decodeJson },
  { name: 'url', applies: (t) => t.includes('%'), decode: (t, m) => decodePercent(t, m, false) },
  { name: 'form', applies: (t) => t.includes('+'), decode: (t, m) => decodePercent(t, m, true) },
  { name: 'html', applies: (t) => t.includes('&'), decode: decodeHtml },
  { name: 'lines', applies: (t) => t.includes('\n') || t.includes('\r'), decode: decodeLines },
]

/** How many escapings deep a view may go. Each level is one encoding wrapped around another. */
export const DEFAULT_VIEW_DEPTH = 4
/** A bound on the views of one text, so a hostile text cannot make a scan explode. */
const MAX_VIEWS = 32

function compose(outer: SourceMap | undefined, inner: SourceMap | undefined): SourceMap | undefined {
  if (!inner) return outer
  if (!outer) return inner
  const starts = new Int32Array(inner.starts.length)
  const ends = new Int32Array(inner.ends.length)
  for (let i = 0; i < starts.length; i++) {
    starts[i] = outer.starts[inner.starts[i] as number] as number
    ends[i] = outer.ends[(inner.ends[i] as number) - 1] as number
  }
  return { starts, ends }
}

/**
 * The views of `text`: the text, then every distinct text reached by undoing up to
 * `depth` escapings, in any order (JSON inside a URL, a URL inside JSON, JSON inside
 * JSON…). `form` is only tried when `withForm` (a secret has a space, the only
 * character form encoding writes differently from percent-encoding).
 */
export function viewsOf(text: string, options: { depth: number; withForm: boolean; withMap: boolean }): View[] {
  const views: View[] = [{ text, decodings: [] }]
  const seen = new Set<string>([text])
  let frontier = views
  for (let level = 0; level < options.depth && frontier.length > 0; level++) {
    const next: View[] = []
    for (const view of frontier) {
      for (const decoder of DECODERS) {
        if (decoder.name === 'form' && !options.withForm) continue
        if (!decoder.applies(view.text)) continue
        const decoded = decoder.decode(view.text, options.withMap)
        if (seen.has(decoded.text)) continue
        seen.add(decoded.text)
        const derived: View = {
          text: decoded.text,
          decodings: [...view.decodings, decoder.name],
          map: options.withMap ? compose(view.map, decoded.map) : undefined,
        }
        next.push(derived)
        views.push(derived)
        if (views.length >= MAX_VIEWS) return views
      }
    }
    frontier = next
  }
  return views
}

/** Where a view's position `i` (a character) starts in the original text. */
export const sourceStart = (view: View, i: number): number => (view.map ? view.map.starts[i]! : i)
/** Where a view's span ending before `end` ends in the original text. */
export const sourceEnd = (view: View, end: number): number => (view.map ? view.map.ends[end - 1]! : end)

/**
 * Where an escape that is not complete yet may begin at the end of a view (a `\u00`,
 * a `%4`, an `&#x4`), or -1. Streams hold such a tail back: the next characters could
 * turn it into part of a secret.
 */
export function pendingEscapeAt(text: string): number {
  const from = Math.max(0, text.length - 10)
  for (let i = from; i < text.length; i++) {
    const c = text[i]
    if (c === '\\' || c === '%' || c === '&') return i
  }
  return -1
}
