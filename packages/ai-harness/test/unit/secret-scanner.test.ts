import { SECRET_FORMS } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { MIN_SECRET_LENGTH, SECRET_MARKER, SecretScanner } from '../../src/log.js'

const secret = 'sk_live_51HxQz9Ab+/cd'
const scanner = new SecretScanner([secret])
const b64 = (text: string) => Buffer.from(text).toString('base64')

/** A small seeded generator, so a failing case can be replayed. */
function random(seed: number) {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

/** Characters a hostile secret is made of: quotes, backslashes, escapes' own characters, spaces, non-ASCII, controls. */
const ALPHABETS = [
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
  '0123456789',
  '"\\/ +%&=?#<>\'!~*()[]{}:;,.-_',
  'éüßñ日本語中文😀🔑',
  '\n\t\r\u0001\u001f\u007f',
]

function randomSecret(next: () => number, digitsOnly: boolean): string {
  const length = MIN_SECRET_LENGTH + Math.floor(next() * 20)
  let out = ''
  while (out.length < length) {
    const alphabet = digitsOnly ? ALPHABETS[1]! : ALPHABETS[Math.floor(next() * ALPHABETS.length)]!
    const chars = Array.from(alphabet)
    out += chars[Math.floor(next() * chars.length)]
  }
  return out
}

/** Where a leaked text can sit: alone, inside prose, in an object key, deep in a value, inside JSON text in a string. */
const POSITIONS: Array<{ name: string; embed: (text: string) => unknown }> = [
  { name: 'alone', embed: (text) => text },
  { name: 'inside prose', embed: (text) => ({ note: `before ${text} after` }) },
  { name: 'as an object key', embed: (text) => ({ [text]: 1 }) },
  { name: 'deep in arrays', embed: (text) => ({ a: [1, { b: [null, text] }] }) },
  { name: 'in JSON text inside a string', embed: (text) => ({ body: JSON.stringify({ data: `x${text}y` }) }) },
]

describe('SecretScanner finds a secret in every form it promises, wherever it sits', () => {
  const next = random(20260101)
  const secrets = [
    ...Array.from({ length: 14 }, () => randomSecret(next, false)),
    ...Array.from({ length: 3 }, () => randomSecret(next, true)),
    'pa"ss\\wo rd/é日😀',
    'Tr0ub4dor!3xyz',
  ]
  for (const [index, value] of secrets.entries()) {
    it(`random secret #${index} (${value.length} characters): every form × every position is found, and redaction leaves none`, () => {
      const alone = new SecretScanner([value])
      const misses: string[] = []
      for (const form of SECRET_FORMS) {
        const text = form.encode(value)
        for (const position of POSITIONS) {
          const embedded = position.embed(text)
          if (alone.find(embedded) === null) misses.push(`not found: ${form.name} ${position.name}`)
          const redacted = alone.redact(embedded)
          if (alone.find(redacted) !== null) misses.push(`left after redaction: ${form.name} ${position.name}`)
        }
      }
      expect(misses).toEqual([])
    })
  }

  it('a numeric secret returned as a JSON number is found, and the number becomes the marker', () => {
    const pin = new SecretScanner(['4929173645'])
    expect(pin.find({ account: { pin: 4929173645 } })).toEqual({ path: '$.account.pin', encoding: 'plain' })
    expect(pin.redact({ account: { pin: 4929173645, other: 7 } })).toEqual({ account: { pin: SECRET_MARKER, other: 7 } })
    expect(pin.redactText('{"pin":4929173645,"n":1}')).toBe(`{"pin":"${SECRET_MARKER}","n":1}`)
  })

  it('says where and in which form, without the secret', () => {
    const found = scanner.find({ deep: [{ text: `https://x.test/?t=${encodeURIComponent(secret)}` }] })
    expect(found).toEqual({ path: '$.deep[0].text', encoding: 'url' })
    expect(scanner.find({ b: encodeURIComponent(b64(`xy${secret}`)) })?.encoding).toMatch(/base64$/)
    const quoted = new SecretScanner(['pa"ss\\word!x'])
    expect(quoted.find({ s: JSON.stringify({ password: 'pa"ss\\word!x' }) })?.encoding).toBe('json')
    const inKey = scanner.find({ [secret]: 1 })
    expect(inKey?.path).toBe('$["<key>"]')
    expect(JSON.stringify(inKey)).not.toContain(secret)
  })

  it('finds a secret under three escapings wrapped around each other, also in a text crowded with every kind of escape', () => {
    const quoted = new SecretScanner(['pa"ss\\wo rd!x'])
    const deepest = encodeURIComponent(JSON.stringify(JSON.stringify({ token: 'pa"ss\\wo rd!x' })))
    const crowd = 'a\\n b %41 &amp; c+d \\u0041 &#x42; %E2%82%AC\n'.repeat(200)
    expect(quoted.scanText(`${crowd}${deepest}${crowd}`)).not.toBeNull()
    expect(quoted.scanText(quoted.redactText(`${crowd}${deepest}${crowd}`))).toBeNull()
  })

  it('does not flag ordinary text, nor text that only shares a piece of the secret', () => {
    expect(scanner.find({ note: 'charge ch_123 succeeded', data: b64('hello world, nothing here') })).toBeNull()
    expect(scanner.find({ half: secret.slice(0, 10), rest: secret.slice(10), hex: 'deadbeef'.repeat(8) })).toBeNull()
  })

  it('refuses secrets too short to tell from ordinary text', () => {
    expect(() => new SecretScanner(['x'.repeat(MIN_SECRET_LENGTH - 1)])).toThrow(RangeError)
  })
})

describe('SecretScanner.redact cuts secrets out of content and keeps the rest', () => {
  it('replaces plain and whole-encoded occurrences and keeps the text around them', () => {
    const out = scanner.redact({ auth: `Bearer ${secret}`, b: b64(secret), n: 5, list: [`id=${Buffer.from(secret).toString('hex')};`] })
    expect(out).toEqual({ auth: `Bearer ${SECRET_MARKER}`, b: SECRET_MARKER, n: 5, list: [`id=${SECRET_MARKER};`] })
  })

  it('cuts a secret inside a larger base64 blob together with the characters that carry any of its bits', () => {
    const blob = b64(`a much longer prefix ${secret} and a much longer suffix`)
    const out = scanner.redactText(blob)
    expect(out).toContain(SECRET_MARKER)
    expect(out.length).toBeGreaterThan(SECRET_MARKER.length + 20)
    expect(scanner.scanText(out)).toBeNull()
  })

  it('keeps JSON text JSON: a secret in tool-call arguments becomes the marker string', () => {
    const quoted = 'pa"ss\\word!x'
    const withQuotes = new SecretScanner([quoted])
    const args = JSON.stringify({ user: 'bob', password: quoted, note: `my ${quoted}` })
    expect(JSON.parse(withQuotes.redactText(args))).toEqual({ user: 'bob', password: SECRET_MARKER, note: `my ${SECRET_MARKER}` })
  })

  it('never cuts the structure it is told to keep: an id holding the secret is replaced whole, the others stay', () => {
    const word = new SecretScanner(['Carlsberg'])
    const event = { type: 'TOOL_CALL_ARGS', toolCallId: 'call_Carlsberg_1', messageId: 'm-1', delta: 'a Carlsberg, please' }
    expect(word.redact(event, { keys: new Set(['type', 'toolCallId', 'messageId']) })).toEqual({
      type: 'TOOL_CALL_ARGS',
      toolCallId: SECRET_MARKER,
      messageId: 'm-1',
      delta: `a ${SECRET_MARKER}, please`,
    })
  })

  it('leaves nothing a scan can find, also where secrets overlap or repeat', () => {
    const value = { a: `${secret}${secret}`, b: encodeURIComponent(`?q=${secret}`), c: Buffer.from(secret).toString('base64url') }
    expect(scanner.find(scanner.redact(value))).toBeNull()
  })

  it('returns the same object when there is nothing to cut', () => {
    const value = { a: 'nothing here' }
    expect(scanner.redact(value)).toBe(value)
    expect(new SecretScanner().redact(value)).toBe(value)
  })
})

describe('SecretScanner.settledLength holds back a growing text from where a secret could begin', () => {
  it('gives out everything before a possible start and nothing after it', () => {
    const text = `Your key is ${secret.slice(0, 6)}`
    expect(scanner.settledLength(text)).toBe('Your key is '.length)
    expect(scanner.settledLength('Nothing to see here.')).toBe('Nothing to see here.'.length)
  })

  it('holds back an escape that is not complete yet', () => {
    expect(scanner.settledLength('a value of \\u00')).toBe('a value of '.length)
    expect(scanner.settledLength('a value of %4')).toBe('a value of '.length)
  })

  it('streamed in pieces of every size, the given-out text never holds the secret in any form', () => {
    const word = 'pa"ss\\wo rd/é日😀'
    const secretScanner = new SecretScanner([word])
    for (const form of SECRET_FORMS) {
      const full = `Here it is: ${form.encode(word)} — done.`
      for (const size of [1, 2, 3, 7]) {
        let given = ''
        let at = 0
        for (let end = size; at < full.length; end += size) {
          const text = full.slice(0, Math.min(end, full.length))
          const settled = end >= full.length ? text.length : secretScanner.settledLength(text)
          if (settled > at) {
            given += secretScanner.redactSettled(text, at, settled)
            at = settled
          }
        }
        expect(secretScanner.scanText(given), `${form.name} in pieces of ${size}`).toBeNull()
        expect(given.startsWith('Here it is: ')).toBe(true)
        expect(given.endsWith(' — done.')).toBe(true)
      }
    }
  })
})
