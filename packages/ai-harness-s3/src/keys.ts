import { MAX_TIME_MS, utf8Length, WAITING_FOR_PERSON } from '@tanstack/ai-harness/store'

/**
 * Every object key the store writes, in one place. Under the store's prefix `P`:
 *
 * ```
 * P log/<id>/<gen:8>/<batch:12>    one append batch; batch numbers are dense from 1 in each
 *                                  generation; an empty object is a tombstone (see delete.ts)
 * P lease/<id>                     the session's lease (owner, fence, expiry)
 * P wakeup/<id>                    the session's wakeup: { at, tag } (the source of truth)
 * P due/<at:16>/<id>/<tag>         the same wakeup, listable by due time from the key alone
 * P session/<hex id>               an empty marker: the session has a log (for the listing)
 * ```

 * A session marker holds the id as the hex of its UTF-8 bytes, which S3's key order
 * sorts as the ids' code point order (the order of every session listing); the other
 * keys use the shorter, readable escape below.
 *
 * `<id>` is the log id escaped so that it never contains `/` and two ids never share an
 * encoding; so `log/<id>/` is never a prefix of another log's keys.
 */

/** Width of a generation number: a log id can be deleted and begun again 10^8 times. */
const GEN_DIGITS = 8
/** Width of a batch number: lexical order equals numeric order up to 10^12 batches. */
const BATCH_DIGITS = 12
/** Width of a time in ms since the epoch: MAX_TIME_MS (8.64e15) has 16 digits. */
export const TIME_DIGITS = 16
/** Width of a due key's tag: `<write time>-<12 hex digits>`. */
const TAG_LENGTH = TIME_DIGITS + 1 + 12
/** S3's limit on a key, in bytes of UTF-8. */
export const MAX_KEY_BYTES = 1024

// Kept as-is; every other UTF-8 byte becomes `~` and two hex digits, so an id takes at most
// three key bytes per byte of its own.
const PLAIN = /^[A-Za-z0-9_-]*$/
const PLAIN_BYTE = /[A-Za-z0-9_-]/

// TextEncoder and TextDecoder, not Buffer: the store runs where there is no Buffer (workerd).
const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Lower-case hex of bytes, two digits a byte. */
export const hexOf = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')

/** An injective, `/`-free, readable encoding of a log id: `a:b` → `a~3ab`, `é` → `~c3~a9`. */
export function encodeId(id: string): string {
  if (PLAIN.test(id)) return id
  let out = ''
  for (const byte of encoder.encode(id)) {
    const ch = String.fromCharCode(byte)
    out += byte < 0x80 && PLAIN_BYTE.test(ch) ? ch : `~${byte.toString(16).padStart(2, '0')}`
  }
  return out
}

export function decodeId(encoded: string): string {
  if (PLAIN.test(encoded)) return encoded
  const bytes: number[] = []
  for (let i = 0; i < encoded.length; i++) {
    if (encoded[i] === '~') {
      bytes.push(Number.parseInt(encoded.slice(i + 1, i + 3), 16))
      i += 2
    } else bytes.push(encoded.charCodeAt(i))
  }
  return decoder.decode(Uint8Array.from(bytes))
}

/** `''` stays `''`; anything else ends with exactly one `/`, so `app` and `app2` never overlap. */
export function normalizePrefix(prefix: string | undefined): string {
  if (!prefix) return ''
  return prefix.endsWith('/') ? prefix : `${prefix}/`
}

const pad = (value: number, digits: number) => String(value).padStart(digits, '0')

export interface DueKey {
  readonly at: number
  readonly logId: string
  readonly tag: string
}

/** One key of a log: a batch slot of a generation. */
export interface SlotKey {
  readonly gen: number
  readonly batch: number
}

/** The key layout of one store prefix. */
export function keyLayout(prefix: string) {
  const p = normalizePrefix(prefix)
  const logPrefix = (logId: string) => `${p}log/${encodeId(logId)}/`
  const duePrefix = `${p}due/`
  const slot = /^(\d{8})\/(\d{12})$/
  const dueKey = /^(\d{16})\/([A-Za-z0-9_~-]+)\/([A-Za-z0-9_-]+)$/
  // The longest key holds a due time, an id and a tag; ids get what S3's 1024 bytes leave.
  const overhead = utf8Length(`${duePrefix}${pad(MAX_TIME_MS, TIME_DIGITS)}//${'t'.repeat(TAG_LENGTH)}`)
  return {
    /** Everything the store keeps under its prefix. */
    root: p,
    /** The longest log id, in UTF-8 bytes, whose every key fits in S3's 1024 bytes (escaped, 3 bytes a byte). */
    maxLogIdBytes: Math.floor((MAX_KEY_BYTES - overhead) / 3),
    logPrefix,
    /** The prefix of one generation of a log. */
    genPrefix: (logId: string, gen: number) => `${logPrefix(logId)}${pad(gen, GEN_DIGITS)}/`,
    batch: (logId: string, gen: number, batch: number) => `${logPrefix(logId)}${pad(gen, GEN_DIGITS)}/${pad(batch, BATCH_DIGITS)}`,
    /** The generation and batch number of a key under `logPrefix(logId)`, or undefined for a foreign key. */
    slotOf(logId: string, key: string): SlotKey | undefined {
      const start = logPrefix(logId)
      const match = key.startsWith(start) ? slot.exec(key.slice(start.length)) : null
      return match ? { gen: Number(match[1]), batch: Number(match[2]) } : undefined
    },
    lease: (logId: string) => `${p}lease/${encodeId(logId)}`,
    sessionPrefix: `${p}session/`,
    session: (logId: string) => `${p}session/${hexOf(encoder.encode(logId))}`,
    /** The session id of a marker key, or undefined for a key this layout did not write. */
    parseSession(key: string): string | undefined {
      const hex = key.startsWith(`${p}session/`) ? key.slice(`${p}session/`.length) : ''
      return /^(?:[0-9a-f]{2})+$/.test(hex)
        ? decoder.decode(Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16)))
        : undefined
    },
    /** Every due key of a session waiting for a person begins with it. */
    waitingPrefix: `${duePrefix}${pad(WAITING_FOR_PERSON, TIME_DIGITS)}/`,
    wakeup: (logId: string) => `${p}wakeup/${encodeId(logId)}`,
    duePrefix,
    due: (at: number, logId: string, tag: string) => `${duePrefix}${pad(at, TIME_DIGITS)}/${encodeId(logId)}/${tag}`,
    /** A due key's tag: the write time (sortable) and a random part. */
    tag: (writtenAt: number, random: string) => `${pad(Math.max(0, Math.floor(writtenAt)), TIME_DIGITS)}-${random}`,
    /** The write time of a tag. */
    writtenAt: (tag: string) => Number(tag.slice(0, TIME_DIGITS)),
    /** Reads a due key back, or undefined for a key this layout did not write. */
    parseDue(key: string): DueKey | undefined {
      const match = key.startsWith(duePrefix) ? dueKey.exec(key.slice(duePrefix.length)) : null
      if (!match) return undefined
      return { at: Number(match[1]), logId: decodeId(match[2]!), tag: match[3]! }
    },
  }
}

export type KeyLayout = ReturnType<typeof keyLayout>
