import type { JsonValue } from '../json/json-types.js'
import type { LogRecord } from './types.js'

/**
 * JSON texts of records the runtime built from JSON text of its own (a step's record, the
 * hot path), so a store's `prepareBatch` does not walk and stringify them again. Keyed by
 * the record object, and only for records that `keepRecordText` froze with their values:
 * nobody can change one after its text was taken, so the text is the record. A record
 * from anywhere else (an app's, a copy, another copy of this package) has no entry and is
 * checked in full, as the store contract says. Internal: not exported from any entry point.
 */
const texts = new WeakMap<object, string>()

/**
 * Freezes `record` and everything in it, and keeps `text` as its JSON text (the caller
 * made `text` as `JSON.stringify(record)` would, from a value that passed the JSON check).
 */
export function keepRecordText<R extends LogRecord>(record: R, text: string): R {
  freezeTree(record)
  texts.set(record, text)
  return record
}

/** The JSON text `keepRecordText` kept for this very record object, if it did. */
export function keptRecordText(record: unknown): string | undefined {
  return typeof record === 'object' && record !== null ? texts.get(record) : undefined
}

/** Freezes a JSON tree (parsed from text: no cycles, no accessors). */
function freezeTree(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return
  Object.freeze(value)
  if (Array.isArray(value)) for (const item of value) freezeTree(item)
  else for (const key of Object.keys(value)) freezeTree((value as Record<string, unknown>)[key])
}

/**
 * A record of `head`'s fields then `value`, with `valueText` (`JSON.stringify` of a value
 * that passed the JSON check) parsed as its value; frozen, its JSON text kept. The text is
 * `JSON.stringify` of the record: head's keys (none an array index, none `value`) in
 * their order, then `"value"`, whose text parses and prints back to itself.
 */
export function recordWithValueText<R extends LogRecord>(head: R, valueText: string | undefined): R & { value?: JsonValue } {
  if (valueText === undefined) return keepRecordText(head, JSON.stringify(head))
  const headText = JSON.stringify(head)
  const record = head as R & { value?: JsonValue }
  record.value = JSON.parse(valueText) as JsonValue
  return keepRecordText(record, `${headText.slice(0, -1)},"value":${valueText}}`)
}
