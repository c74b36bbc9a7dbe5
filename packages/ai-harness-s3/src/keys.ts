import { MAX_TIME_MS, utf8Length } from '@tanstack/ai-harness/store'

/**
 * Every object key the store writes, in one place. Under the store's prefix `P`:
 *
 * ```
 * P log/<id>/<batch:12>            one append batch; batch numbers are dense from 1
 * P lease/<id>                     the session's lease (owner, fence, expiry)
 * P wakeup/<id>                    the session's wakeup: { at, tag } (the source of truth)
 * P due/<at:16>/<id>/<tag>         the same wakeup, listable by due time from the key alone
 * ```
 *
 * `<id>` is the log id escaped so that it never contains `/` and two ids never share an
 * encoding; so `log/<id>/` is never a prefix of another log's keys.
 */

/** Width of a batch number: lexical order equals numeric order up to 10^12 batches. */
const BATCH_DIGITS = 12
/** Width of a due time in ms since the epoch: every time up to MAX_TIME_MS (the year 275760). */
const TIME_DIGITS = 16
export const MAX_DUE_TIME = MAX_TIME_MS
/** A due key's tag: the write time (16 digits), `-`, 12 hex digits. */
export const TAG_LENGTH = 16 + 1 + 12
/** S3's longest key, in bytes of UTF-8. */
const MAX_KEY_BYTES = 1024
/** The longest key beyond the prefix and the encoded id: `due/<time>/<id>/<tag>`. */
const LONGEST_KEY_REST = 'due/'.length + TIME_DIGITS + 1 + 1 + TAG_LENGTH
/** An encoded id takes at most 5 bytes per byte of the id's UTF-8 (`~` and 4 hex digits for an ASCII character). */
const ENCODED_BYTES_PER_ID_BYTE = 5

/**
 * The longest log id (UTF-8 bytes) whose every key fits S3's 1024 bytes under `prefix`,
 * whatever its characters: the `maxLogIdBytes` a store on that prefix declares.
 */
export function maxLogIdBytesFor(prefix: string): number {
  return Math.floor((MAX_KEY_BYTES - utf8Length(normalizePrefix(prefix)) - LONGEST_KEY_REST) / ENCODED_BYTES_PER_ID_BYTE)
}

// Kept as-is; every other UTF-16 unit becomes `~` and four hex digits. Working on code
// units (not UTF-8) keeps even lone surrogates distinct.
const PLAIN = /[A-Za-z0-9_-]/

/** An injective, `/`-free, readable encoding of a log id: `a:b` → `a~003ab`. */
export function encodeId(id: string): string {
  let out = ''
  for (let i = 0; i < id.length; i++) {
    const ch = id[i]!
    out += PLAIN.test(ch) ? ch : `~${id.charCodeAt(i).toString(16).padStart(4, '0')}`
  }
  return out
}

export function decodeId(encoded: string): string {
  return encoded.replace(/~([0-9a-f]{4})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
}

/** `''` stays `''`; anything else ends with exactly one `/`, so `app` and `app2` never overlap. */
export function normalizePrefix(prefix: string | undefined): string {
  if (!prefix) return ''
  return prefix.endsWith('/') ? prefix : `${prefix}/`
}

export interface DueKey {
  readonly at: number
  readonly logId: string
  readonly tag: string
}

/** The key layout of one store prefix. */
export function keyLayout(prefix: string) {
  const p = normalizePrefix(prefix)
  const logPrefix = (logId: string) => `${p}log/${encodeId(logId)}/`
  const duePrefix = `${p}due/`
  return {
    /** Everything the store keeps under its prefix. */
    root: p,
    logPrefix,
    batch: (logId: string, batch: number) => logPrefix(logId) + String(batch).padStart(BATCH_DIGITS, '0'),
    /** The batch number of a key under `logPrefix(logId)`, or undefined for a foreign key. */
    batchOf(logId: string, key: string): number | undefined {
      const tail = key.slice(logPrefix(logId).length)
      return key.startsWith(logPrefix(logId)) && /^\d{12}$/.test(tail) ? Number(tail) : undefined
    },
    lease: (logId: string) => `${p}lease/${encodeId(logId)}`,
    wakeup: (logId: string) => `${p}wakeup/${encodeId(logId)}`,
    duePrefix,
    due: (at: number, logId: string, tag: string) => `${duePrefix}${String(at).padStart(TIME_DIGITS, '0')}/${encodeId(logId)}/${tag}`,
    /** Reads a due key back, or undefined for a key this layout did not write. */
    parseDue(key: string): DueKey | undefined {
      const match = /^(\d{16})\/([A-Za-z0-9_~-]+)\/([A-Za-z0-9_-]+)$/.exec(key.slice(duePrefix.length))
      if (!key.startsWith(duePrefix) || !match) return undefined
      return { at: Number(match[1]), logId: decodeId(match[2]!), tag: match[3]! }
    },
  }
}

export type KeyLayout = ReturnType<typeof keyLayout>
