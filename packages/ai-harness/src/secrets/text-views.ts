/**
 * Views of a text: the text itself, and what it reads as once common escapings are
 * undone (JSON string escapes, percent-encoding, form encoding, HTML character
 * references, line breaks in wrapped base64). A secret hides in a text when one of its
 * encoded forms occurs in one of these views.
 *
 * Each view can also say, for every one of its characters, which characters of the
 * original text it came from, so a match in a view can be cut out of the original.
 * That map is only built when a match needs it.
 */

/** The escapings a view undoes. `all` undoes JSON, URL and HTML escapes in one pass. */
export type Decoding = 'json' | 'url' | 'form' | 'html' | 'all' | 'all-form' | 'lines'

/** For each output character: the input span [start, end) it was decoded from. */
export interface SourceMap {
  readonly starts: Int32Array
  readonly ends: Int32Array
}

export interface View {
  readonly text: string
  /** The passes that made this view from the original, in order. */
  readonly decodings: readonly Decoding[]
}

/** Collects decoded output and, when asked, where each output unit came from. */
class Output {
  readonly #parts: string[] = []
  #length = 0
  #starts: Int32Array | undefined
  #ends: Int32Array | undefined

  constructor(withMap: boolean, capacity: number) {
    if (withMap) {
      this.#starts = new Int32Array(Math.max(16, capacity))
      this.#ends = new Int32Array(Math.max(16, capacity))
    }
  }

  /** Adds `text`; `literal` maps each unit to itself, otherwise every unit maps to the whole escape. */
  push(text: string, start: number, end: number, literal: boolean): void {
    if (text === '') return
    this.#parts.push(text)
    const at = this.#length
    this.#length += text.length
    if (!this.#starts || !this.#ends) return
    if (this.#length > this.#starts.length) {
      const grown = Math.max(this.#length, this.#starts.length * 2)
      const starts = new Int32Array(grown)
      const ends = new Int32Array(grown)
      starts.set(this.#starts)
      ends.set(this.#ends)
      this.#starts = starts
      this.#ends = ends
    }
    for (let i = 0; i < text.length; i++) {
      this.#starts[at + i] = literal ? start + i : start
      this.#ends[at + i] = literal ? start + i + 1 : end
    }
  }

  result(): { text: string; map: SourceMap | undefined } {
    const text = this.#parts.join('')
    const map =
      this.#starts && this.#ends
        ? { starts: this.#starts.subarray(0, this.#length), ends: this.#ends.subarray(0, this.#length) }
        : undefined
    return { text, map }
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }
const HTML_NAMED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

const JSON_ESCAPE = String.raw`\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])`
const PERCENT_RUN = '(?:%[0-9a-fA-F]{2})+'
const HTML_REFERENCE = '&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|amp|lt|gt|quot|apos);'

/** What one pass undoes. */
interface Pass {
  readonly json: boolean
  readonly url: boolean
  readonly plus: boolean
  readonly html: boolean
  readonly pattern: RegExp
}

function pass(kinds: { json?: boolean; url?: boolean; plus?: boolean; html?: boolean }): Pass {
  const parts = [kinds.json && JSON_ESCAPE, kinds.url && PERCENT_RUN, kinds.html && HTML_REFERENCE, kinds.plus && String.raw`\+`]
  return {
    json: !!kinds.json,
    url: !!kinds.url,
    plus: !!kinds.plus,
    html: !!kinds.html,
    pattern: new RegExp(parts.filter(Boolean).join('|'), 'g'),
  }
}

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
  const count = run.length / 3
  const bytes = new Array<number>(count)
  for (let i = 0; i < count; i++) bytes[i] = Number.parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16)
  let i = 0
  while (i < count) {
    const lead = bytes[i]!
    let size = utf8SequenceLength(lead)
    if (size === 0 || i + size > count) size = 1
    let code = size === 1 ? lead : lead & (0xff >> (size + 1))
    for (let k = 1; k < size; k++) {
      const next = bytes[i + k]!
      if ((next & 0xc0) !== 0x80) {
        size = 1
        code = lead
        break
      }
      code = (code << 6) | (next & 0x3f)
    }
    // A byte that starts no valid sequence decodes to U+FFFD, as TextDecoder does.
    const char = size === 1 && lead >= 0x80 ? '\ufffd' : String.fromCodePoint(code)
    out.push(char, offset + i * 3, offset + (i + size) * 3, false)
    i += size
  }
}

/** Undoes, in one left-to-right pass, the escapes `p` names, wherever they are. */
function decode(text: string, p: Pass, withMap: boolean): { text: string; map: SourceMap | undefined } {
  const out = new Output(withMap, text.length)
  let last = 0
  for (const match of text.matchAll(p.pattern)) {
    const at = match.index
    const sequence = match[0]
    out.push(text.slice(last, at), last, at, true)
    last = at + sequence.length
    if (sequence === '+') out.push(' ', at, last, false)
    else if (sequence[0] === '%') pushPercentRun(out, sequence, at)
    else if (sequence[0] === '\\') {
      const decoded =
        sequence[1] === 'u'
          ? String.fromCharCode(Number.parseInt(sequence.slice(2), 16))
          : (SIMPLE_ESCAPES[sequence[1] as string] as string)
      out.push(decoded, at, last, false)
    } else {
      const body = sequence.slice(1, -1)
      const code = body[0] === '#' ? (body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1))) : -1
      const decoded = code >= 0 ? (code <= 0x10ffff ? String.fromCodePoint(code) : sequence) : (HTML_NAMED[body] as string)
      out.push(decoded, at, last, false)
    }
  }
  out.push(text.slice(last), last, text.length, true)
  return out.result()
}

/** Drops line breaks, as base64 and hex are wrapped in MIME, PEM and many logs. */
function decodeLines(text: string, withMap: boolean): { text: string; map: SourceMap | undefined } {
  const out = new Output(withMap, text.length)
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

const PASSES: Readonly<Record<Exclude<Decoding, 'lines'>, Pass>> = {
  json: pass({ json: true }),
  url: pass({ url: true }),
  form: pass({ url: true, plus: true }),
  html: pass({ html: true }),
  all: pass({ json: true, url: true, html: true }),
  'all-form': pass({ json: true, url: true, plus: true, html: true }),
}

const run = (decoding: Decoding, text: string, withMap: boolean) =>
  decoding === 'lines' ? decodeLines(text, withMap) : decode(text, PASSES[decoding], withMap)

/** How many escapings wrapped around each other a scan undoes. */
export const DEFAULT_VIEW_DEPTH = 4

const mightEscape = (text: string) => text.includes('\\') || text.includes('%') || text.includes('&')

/**
 * The views of `text`: the text; each single kind of escaping undone once (JSON, URL,
 * HTML, and form encoding when `withForm`: a secret has a space, the one character
 * form encoding writes differently); every escaping undone at once, again and again up
 * to `depth` times (JSON inside a URL, a URL inside JSON, JSON inside JSON…); and each
 * of these without its line breaks. At most 2 × (5 + 2 × depth) views, whatever the text:
 * a text crowded with escapes of every kind cannot make a scan explode, nor crowd out the
 * view that finds a secret.
 */
export function viewsOf(text: string, options: { depth: number; withForm: boolean }): View[] {
  const views: View[] = [{ text, decodings: [] }]
  const seen = new Set<string>([text])
  const add = (view: View) => {
    if (seen.has(view.text)) return
    seen.add(view.text)
    views.push(view)
  }
  if (mightEscape(text) || (options.withForm && text.includes('+'))) {
    const singles: Decoding[] = ['json', 'url', 'html']
    if (options.withForm) singles.push('form')
    for (const decoding of singles) add({ text: run(decoding, text, false).text, decodings: [decoding] })
    for (const all of options.withForm ? (['all', 'all-form'] as const) : (['all'] as const)) {
      let current: View = { text, decodings: [] }
      for (let level = 0; level < options.depth; level++) {
        const next = run(all, current.text, false).text
        if (next === current.text) break
        current = { text: next, decodings: [...current.decodings, all] }
        add(current)
        if (!mightEscape(next) && !(all === 'all-form' && next.includes('+'))) break
      }
    }
  }
  for (const view of [...views]) {
    if (view.text.includes('\n') || view.text.includes('\r'))
      add({ text: run('lines', view.text, false).text, decodings: [...view.decodings, 'lines'] })
  }
  return views
}

function compose(outer: SourceMap | undefined, inner: SourceMap): SourceMap {
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
 * Positions of a view in the original text. The map is built on first use, by running
 * the view's passes again with maps, and kept for the next question.
 */
export class ViewPositions {
  readonly #maps = new Map<View, SourceMap | undefined>()

  constructor(private readonly original: string) {}

  #map(view: View): SourceMap | undefined {
    if (view.decodings.length === 0) return undefined
    if (!this.#maps.has(view)) {
      let text = this.original
      let map: SourceMap | undefined
      for (const decoding of view.decodings) {
        const step = run(decoding, text, true)
        map = compose(map, step.map as SourceMap)
        text = step.text
      }
      this.#maps.set(view, map)
    }
    return this.#maps.get(view)
  }

  /** Where the view's character `i` starts in the original. */
  start(view: View, i: number): number {
    const map = this.#map(view)
    return map ? (map.starts[i] as number) : i
  }

  /** Where a span of the view that ends before `end` ends in the original. */
  end(view: View, end: number): number {
    const map = this.#map(view)
    return map ? (map.ends[end - 1] as number) : end
  }
}

/**
 * Where an escape that is not complete yet may begin at the end of a view (a `\u00`,
 * a `%4`, an `&#x4`), or -1. Streams hold such a tail back: the next characters could
 * turn it into part of a secret.
 */
export function pendingEscapeAt(text: string): number {
  for (let i = Math.max(0, text.length - 10); i < text.length; i++) {
    const c = text[i]
    if (c === '\\' || c === '%' || c === '&') return i
  }
  return -1
}
