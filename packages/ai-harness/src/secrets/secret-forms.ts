/**
 * The encoded forms of one secret that the scanner looks for in every view of a text:
 * the secret as is, its UTF-8 bytes in hex, and in base64 / base64url. Computed once
 * per secret.
 */

/** How a secret's bytes are written. */
export type SecretForm = 'plain' | 'hex' | 'base64' | 'base64url'

export interface Needle {
  readonly form: SecretForm
  readonly text: string
  /** Compared with an ASCII-lower-cased view (hex ignores case). */
  readonly caseless: boolean
  /**
   * For base64 that depends only on the secret's bytes, while the characters around it
   * also carry some of them (a secret inside a larger blob): a redaction widens the cut
   * by up to this many alphabet characters on each side, so none of its bits are left.
   */
  readonly spill: number
}

const encoder = new TextEncoder()

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary)
}

const toBase64Url = (b64: string): string => b64.replace(/\+/g, '-').replace(/\//g, '_')

/**
 * The base64 text that any encoding of a longer byte string containing `bytes` must
 * contain. The bytes can start at any of three offsets within a base64 group; for each,
 * keep only the characters that depend on these bytes alone.
 */
function base64Cores(bytes: Uint8Array): string[] {
  const cores: string[] = []
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length)
    padded.set(bytes, shift)
    const encoded = toBase64(padded)
    const start = shift === 0 ? 0 : 4
    const firstFullByte = shift === 0 ? 0 : 3
    const fullGroups = Math.floor((padded.length - firstFullByte) / 3)
    // A secret has at least 8 bytes, so every core has at least 8 characters.
    cores.push(encoded.slice(start, start + fullGroups * 4))
  }
  return cores
}

/** The JSON string body of a text, as JSON.stringify writes it. */
export const jsonEscaped = (text: string): string => JSON.stringify(text).slice(1, -1)

/** Form encoding (`URLSearchParams`): percent-encoding with `+` for a space. */
export const formEncoded = (text: string): string =>
  encodeURIComponent(text)
    .replace(/%20/g, '+')
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** ASCII-only lower-casing: keeps the length, so positions stay valid. */
export function asciiLower(text: string): string {
  return /[A-Z]/.test(text) ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase()) : text
}

/**
 * The needles of one secret. Base64 is searched for the secret's bytes and for the
 * bytes of its JSON-escaped and URL-encoded forms, as a secret is often base64-encoded
 * inside a JSON document (a JWT payload) or a form body.
 */
export function needlesOf(secret: string): Needle[] {
  const needles = new Map<string, Needle>()
  const add = (needle: Needle) => {
    const key = `${needle.caseless ? 'i' : 's'}:${needle.text}`
    if (!needles.has(key)) needles.set(key, needle)
  }
  const bytes = encoder.encode(secret)
  add({ form: 'plain', text: secret, caseless: false, spill: 0 })
  add({ form: 'hex', text: Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(''), caseless: true, spill: 0 })
  // Any base64 text that encodes bytes holding the secret holds one of its three cores (one per
  // offset in a base64 group); the characters around a core carry a few of its bits, so a cut
  // takes up to three more alphabet characters on each side, and the padding.
  for (const inner of new Set([secret, jsonEscaped(secret), encodeURIComponent(secret), formEncoded(secret)])) {
    for (const text of base64Cores(encoder.encode(inner))) {
      add({ form: 'base64', text, caseless: false, spill: 3 })
      const url = toBase64Url(text)
      if (url !== text) add({ form: 'base64url', text: url, caseless: false, spill: 3 })
    }
  }
  return [...needles.values()]
}

const BASE64_ALPHABET = /[A-Za-z0-9+/\-_]/

/** True for characters that can sit next to a base64 core inside the same blob. */
export const isBase64Char = (c: string | undefined): boolean => c !== undefined && BASE64_ALPHABET.test(c)
