import { childPath } from '../json/check-json.js'

/** Where a secret was found. Never carries the secret itself. */
export interface SecretFinding {
  readonly path: string
  /** How the secret appeared: as is, or in which encoding. */
  readonly encoding: 'plain' | 'base64' | 'base64url' | 'hex' | 'url'
}

/** Secrets shorter than this are refused: their encodings would match ordinary text. */
export const MIN_SECRET_LENGTH = 8

/** The text that replaces a secret in tool results and events. */
export const SECRET_MARKER = '[secret]'

interface Needle {
  readonly encoding: SecretFinding['encoding']
  readonly text: string
  /** Compare against the lower-cased haystack (hex and percent-escapes ignore case). */
  readonly caseless: boolean
  /** The whole secret in this encoding (safe to cut out); false for alignment cores of base64. */
  readonly whole: boolean
}

const toBase64 = (bytes: Uint8Array): string => {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}
const toBase64Url = (b64: string): string => b64.replace(/\+/g, '-').replace(/\//g, '_')

/**
 * The base64 text that any encoding of a longer byte string containing the secret
 * must contain. A secret inside a larger blob can start at any of three byte offsets
 * within a base64 group; for each offset we keep only the characters that depend on
 * the secret's bytes alone.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const cores: string[] = []
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length)
    padded.set(bytes, shift)
    const encoded = toBase64(padded)
    const start = shift === 0 ? 0 : 4
    const firstFullByte = shift === 0 ? 0 : 3
    const usable = padded.length - firstFullByte
    const fullGroups = Math.floor(usable / 3)
    const core = encoded.slice(start, start + fullGroups * 4)
    if (core.length >= 8) cores.push(core)
  }
  return cores
}

function needlesFor(secret: string): Needle[] {
  const bytes = new TextEncoder().encode(secret)
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
  const needles: Needle[] = [
    { encoding: 'plain', text: secret, caseless: false, whole: true },
    { encoding: 'hex', text: hex, caseless: true, whole: true },
  ]
  const url = encodeURIComponent(secret)
  if (url !== secret) needles.push({ encoding: 'url', text: url.toLowerCase(), caseless: true, whole: true })
  const form = url.replace(/%20/g, '+')
  if (form !== url) needles.push({ encoding: 'url', text: form.toLowerCase(), caseless: true, whole: true })
  const full = toBase64(bytes)
  const pushBase64 = (text: string, whole: boolean) => {
    needles.push({ encoding: 'base64', text, caseless: false, whole })
    const urlSafe = toBase64Url(text)
    if (urlSafe !== text) needles.push({ encoding: 'base64url', text: urlSafe, caseless: false, whole })
  }
  pushBase64(full, true)
  for (const core of new Set([full.replace(/=+$/, ''), ...base64Cores(bytes)])) pushBase64(core, false)
  return needles
}

/**
 * Finds secrets in the strings of JSON values, in the clear and in common encodings
 * (base64, base64url, hex, URL-encoding). Object keys are scanned too.
 * Build one per session and reuse it: the encodings are computed once.
 */
export class SecretScanner {
  readonly #secrets: string[] = []
  #needles: Needle[] = []

  constructor(secrets: Iterable<string> = []) {
    for (const secret of secrets) this.add(secret)
  }

  /** Adds a secret. Throws for secrets shorter than {@link MIN_SECRET_LENGTH}. */
  add(secret: string): void {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) {
      throw new RangeError(
        `A session secret must be a string of at least ${MIN_SECRET_LENGTH} characters; shorter ones cannot be told apart from ordinary text.`,
      )
    }
    if (this.#secrets.includes(secret)) return
    this.#secrets.push(secret)
    this.#needles = this.#needles.concat(needlesFor(secret))
  }

  get size(): number {
    return this.#secrets.length
  }

  /** The encoding in which a secret appears in `text`, or null. */
  scanText(text: string): SecretFinding['encoding'] | null {
    if (this.#needles.length === 0 || text.length < MIN_SECRET_LENGTH) return null
    let lower: string | undefined
    for (const needle of this.#needles) {
      if (needle.caseless) {
        lower ??= text.toLowerCase()
        if (lower.includes(needle.text)) return needle.encoding
      } else if (text.includes(needle.text)) return needle.encoding
    }
    return null
  }

  /** The first place a secret appears in a JSON value (keys included), or null. */
  find(value: unknown, root = '$'): SecretFinding | null {
    if (this.#needles.length === 0) return null
    const seen = new Set<object>()
    const walk = (v: unknown, path: string): SecretFinding | null => {
      if (typeof v === 'string') {
        const encoding = this.scanText(v)
        return encoding ? { path, encoding } : null
      }
      if (typeof v !== 'object' || v === null || seen.has(v)) return null
      seen.add(v)
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) {
          const found = walk(v[i], childPath(path, i))
          if (found) return found
        }
        return null
      }
      for (const [key, inner] of Object.entries(v)) {
        const keyEncoding = this.scanText(key)
        if (keyEncoding) return { path: childPath(path, '<key>'), encoding: keyEncoding }
        const found = walk(inner, childPath(path, key))
        if (found) return found
      }
      return null
    }
    return walk(value, root)
  }

  /**
   * Replaces every secret in a string by {@link SECRET_MARKER}. A string that still
   * holds a secret after the plain and whole-encoding replacements (a secret inside a
   * larger encoded blob, where cutting out characters would leave some of its bits)
   * is replaced whole.
   */
  redactText(text: string): string {
    if (this.scanText(text) === null) return text
    let out = text
    for (const secret of this.#secrets) {
      out = out.split(secret).join(SECRET_MARKER)
    }
    for (const needle of this.#needles) {
      if (needle.encoding === 'plain' || !needle.whole) continue
      if (needle.caseless) {
        out = out.replace(new RegExp(escapeRegExp(needle.text), 'gi'), SECRET_MARKER)
      } else {
        out = out.split(needle.text).join(SECRET_MARKER)
      }
    }
    return this.scanText(out) === null ? out : SECRET_MARKER
  }

  /** A deep copy of a JSON-like value with every secret replaced by the marker. */
  redact<T>(value: T): T {
    if (this.#needles.length === 0) return value
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redactText(v)
      if (Array.isArray(v)) return v.map(walk)
      if (typeof v === 'object' && v !== null) {
        const proto = Object.getPrototypeOf(v)
        if (proto !== Object.prototype && proto !== null) return v
        const out: Record<string, unknown> = {}
        for (const [key, inner] of Object.entries(v)) out[this.redactText(key)] = walk(inner)
        return out
      }
      return v
    }
    return walk(value) as T
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
