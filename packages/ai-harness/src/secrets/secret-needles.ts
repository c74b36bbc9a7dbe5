import { asciiLower, isBase64Char, type Needle, needlesOf, type SecretForm } from './secret-forms.js'
import { type Decoding, type View, ViewPositions, viewsOf } from './text-views.js'

/** Secrets shorter than this are refused: their encodings would match ordinary text. */
export const MIN_SECRET_LENGTH = 8

/** A span [start, end) of a text that holds a secret. */
export interface Span {
  start: number
  end: number
}

/** Names a match: the escapings undone (`escaped` for a pass that undid them all), then the form. */
const describeMatch = (decodings: readonly Decoding[], form: SecretForm): string =>
  [...decodings.map((d) => (d === 'all' || d === 'all-form' ? 'escaped' : d)), ...(form === 'plain' ? [] : [form])].join('+') || 'plain'

/** Every index where `needle` starts in `haystack`, from `from` on. */
export function indexesOf(haystack: string, needle: string, from = 0): number[] {
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
 * The matcher of a session's secrets: each secret's forms (its needles), indexed by
 * their first character, and the views of a text they are looked for in. The scanner
 * (`SecretScanner`) finds and cuts with it; a growing text is settled with it (`settledLength`).
 */
export class SecretNeedles {
  readonly #secrets: string[] = []
  #needles: Needle[] = []
  #withForm = false
  #shortest = Number.POSITIVE_INFINITY
  #longest = 0
  /** Needles by their first character, for matching at the end of a growing text. */
  readonly #byFirst = new Map<string, Needle[]>()
  readonly #byFirstCaseless = new Map<string, Needle[]>()
  readonly #depth: number

  constructor(depth: number) {
    this.#depth = depth
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

  get size(): number {
    return this.#secrets.length
  }

  has(secret: string): boolean {
    return this.#secrets.includes(secret)
  }

  /** Every needle of every secret. */
  get all(): readonly Needle[] {
    return this.#needles
  }

  /** The length of the longest needle. */
  get longest(): number {
    return this.#longest
  }

  /** The needles that start with `c` (compared as it is), and those that start with `lower` (compared ASCII-lower-cased). */
  startingWith(c: string, lower: string): Needle[] {
    return [...(this.#byFirst.get(c) ?? NO_NEEDLES), ...(this.#byFirstCaseless.get(lower) ?? NO_NEEDLES)]
  }

  /** The text as it is and with its escapings undone, up to the scanner's depth. */
  views(text: string): View[] {
    return viewsOf(text, { depth: this.#depth, withForm: this.#withForm })
  }

  /** How a secret appears in `text` (see `SecretFinding.encoding`), or null. */
  scanText(text: string): string | null {
    if (this.#needles.length === 0 || typeof text !== 'string' || text.length < this.#shortest) return null
    for (const view of this.views(text)) {
      const haystack = haystacksOf(view.text)
      for (const needle of this.#needles) {
        if (haystack(needle).includes(needle.text)) return describeMatch(view.decodings, needle.form)
      }
    }
    return null
  }

  /** Every span of `text` that holds a secret, widened as {@link Needle.spill} says, merged and sorted. */
  spans(text: string): Span[] {
    const spans: Span[] = []
    const positions = new ViewPositions(text)
    for (const view of this.views(text)) {
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
}
