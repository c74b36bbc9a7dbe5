import { describe, expect, it } from 'vitest'
import { MIN_SECRET_LENGTH, SECRET_MARKER, SecretScanner } from '../../src/index.js'

const secret = 'sk_live_51HxQz9Ab+/cd'
const scanner = new SecretScanner([secret])
const b64 = (text: string) => Buffer.from(text).toString('base64')
const b64url = (text: string) => Buffer.from(text).toString('base64url')
const hex = (text: string) => Buffer.from(text).toString('hex')

describe('SecretScanner finds a secret in any string of a JSON value', () => {
  const encodings: Array<[string, string, string]> = [
    ['plain', `Bearer ${secret}`, 'plain'],
    ['base64', b64(secret), 'base64'],
    ['base64 inside a larger blob, every alignment', b64(`x${secret}`), 'base64'],
    ['base64 at offset 2', b64(`xy${secret}tail`), 'base64'],
    ['base64url', b64url(`{"token":"${secret}"}`), 'base64url'],
    ['hex', hex(secret), 'hex'],
    ['upper-case hex', hex(`id=${secret}`).toUpperCase(), 'hex'],
    ['URL-encoding', `https://x.test/?t=${encodeURIComponent(secret)}`, 'url'],
    ['lower-case URL escapes', encodeURIComponent(secret).toLowerCase(), 'url'],
  ]
  for (const [what, text, encoding] of encodings) {
    it(`finds it ${what}`, () => {
      // An encoded core without '+' or '/' reads the same in base64 and base64url.
      const expected = encoding === 'base64url' ? expect.stringMatching(/^base64/) : encoding
      expect(scanner.find({ deep: [{ text }] })).toEqual({ path: '$.deep[0].text', encoding: expected })
    })
  }

  it('finds it in an object key, without saying the key', () => {
    const found = scanner.find({ [secret]: 1 })
    expect(found?.path).toBe('$["<key>"]')
    expect(JSON.stringify(found)).not.toContain(secret)
  })

  it('does not flag ordinary text', () => {
    expect(scanner.find({ note: 'charge ch_123 succeeded', data: b64('hello world, nothing here') })).toBeNull()
  })

  it('refuses secrets too short to tell from ordinary text', () => {
    expect(() => new SecretScanner(['x'.repeat(MIN_SECRET_LENGTH - 1)])).toThrow(RangeError)
  })
})

describe('SecretScanner.redact replaces secrets with a marker', () => {
  it('replaces plain and whole-encoded occurrences and keeps the rest', () => {
    const out = scanner.redact({ auth: `Bearer ${secret}`, b: b64(secret), n: 5, list: [hex(secret)] })
    expect(out).toEqual({ auth: `Bearer ${SECRET_MARKER}`, b: SECRET_MARKER, n: 5, list: [SECRET_MARKER] })
  })

  it('replaces a whole string when the secret hides inside a larger encoded blob', () => {
    const blob = b64(`prefix ${secret} suffix`)
    expect(scanner.redact(blob)).toBe(SECRET_MARKER)
  })

  it('leaves nothing a scan can find', () => {
    const value = { a: `${secret}${secret}`, b: encodeURIComponent(`?q=${secret}`), c: b64url(secret) }
    expect(scanner.find(scanner.redact(value))).toBeNull()
  })
})
