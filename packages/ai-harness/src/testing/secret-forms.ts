/**
 * Every form a secret can leak in that the harness promises to catch, as text a
 * careless tool or a hostile model would write. Tests use it to put a secret into
 * results, arguments, names, schemas and errors, and to search stores and streams.
 */

const encoder = new TextEncoder()

const bytesOf = (text: string): Uint8Array => encoder.encode(text)
// btoa and hex by hand, not Buffer: the testing helpers run on workerd too.
const base64 = (text: string): string => btoa(Array.from(bytesOf(text), (b) => String.fromCharCode(b)).join(''))
const base64url = (text: string): string => base64(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
const hex = (text: string): string => Array.from(bytesOf(text), (b) => b.toString(16).padStart(2, '0')).join('')
const percentEveryByte = (text: string): string => Array.from(bytesOf(text), (b) => `%${b.toString(16).padStart(2, '0')}`).join('')
const unicodeEscapes = (text: string): string =>
  Array.from(text, (c) => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('')).join(
    '',
  )
/** JSON as Python's json.dumps writes it by default: every non-ASCII character as `\uXXXX`. */
const asciiJson = (text: string): string =>
  JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
const html = (text: string): string =>
  Array.from(text, (c) => {
    const named: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
    if (named[c]) return named[c]
    const code = c.codePointAt(0)!
    return code > 0x7e ? `&#x${code.toString(16)};` : c
  }).join('')
const mimeWrapped = (text: string): string => (base64(`${'p'.repeat(50)}${text}${'s'.repeat(60)}`).match(/.{1,76}/g) ?? []).join('\r\n')

export interface SecretForm {
  /** A short name, used in test titles. */
  readonly name: string
  /** The text that holds `secret` in this form. */
  readonly encode: (secret: string) => string
}

/** The forms, each a function from the secret to the text that leaks it. */
export const SECRET_FORMS: readonly SecretForm[] = [
  { name: 'plain', encode: (s) => s },
  { name: 'JSON string', encode: (s) => JSON.stringify(s) },
  { name: 'JSON, non-ASCII as \\u escapes', encode: asciiJson },
  { name: 'JSON, every character as a \\u escape', encode: (s) => `"${unicodeEscapes(s)}"` },
  {
    name: 'JSON, upper-case \\U escapes',
    encode: (s) => `"${unicodeEscapes(s).replace(/\\u([0-9a-f]{4})/g, (_, h: string) => `\\u${h.toUpperCase()}`)}"`,
  },
  { name: 'JSON with \\/', encode: (s) => JSON.stringify(s).replace(/\//g, '\\/') },
  { name: 'JSON inside JSON', encode: (s) => JSON.stringify(JSON.stringify({ token: s })) },
  { name: 'base64', encode: base64 },
  { name: 'base64 without padding', encode: (s) => base64(s).replace(/=+$/, '') },
  { name: 'base64url', encode: base64url },
  { name: 'base64url with padding', encode: (s) => base64(s).replace(/\+/g, '-').replace(/\//g, '_') },
  { name: 'base64 at byte offset 1 of a blob', encode: (s) => base64(`x${s}yz`) },
  { name: 'base64 at byte offset 2 of a blob', encode: (s) => base64(`xy${s}z`) },
  { name: 'base64url at byte offset 1 of a blob', encode: (s) => base64url(`{${s}}`) },
  { name: 'base64 wrapped in MIME lines', encode: mimeWrapped },
  { name: 'hex', encode: hex },
  { name: 'upper-case hex', encode: (s) => hex(s).toUpperCase() },
  { name: 'hex inside longer hex', encode: (s) => hex(`ab${s}cd`) },
  { name: 'encodeURIComponent', encode: encodeURIComponent },
  { name: 'encodeURIComponent, lower-case escapes', encode: (s) => encodeURIComponent(s).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()) },
  { name: 'encodeURI', encode: (s) => encodeURI(`https://api.test/${s}`) },
  { name: 'form encoding (URLSearchParams)', encode: (s) => new URLSearchParams({ user: 'bob', password: s }).toString() },
  { name: 'every byte percent-encoded', encode: (s) => percentEveryByte(s).toUpperCase() },
  { name: 'every byte percent-encoded, lower case', encode: percentEveryByte },
  { name: 'URL-encoded base64', encode: (s) => encodeURIComponent(base64(`??${s}`)) },
  { name: 'JSON-escaped URL encoding', encode: (s) => JSON.stringify(encodeURIComponent(s)).replace(/%/g, '\\u0025') },
  { name: 'URL-encoded JSON', encode: (s) => encodeURIComponent(JSON.stringify({ token: s })) },
  { name: 'URL encoding twice', encode: (s) => encodeURIComponent(encodeURIComponent(s)) },
  { name: 'HTML character references', encode: html },
  { name: 'base64url JSON (a JWT payload)', encode: (s) => base64url(JSON.stringify({ sub: 'u1', token: s })) },
  { name: 'base64 of a form body', encode: (s) => base64(new URLSearchParams({ user: 'bob', password: s }).toString()) },
]
