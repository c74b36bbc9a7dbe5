import { HarnessError } from '../contract/errors.js'

/**
 * Read-only maps and sets over the calls' journals, under the names of the maps a
 * session's state had before it kept one journal per call (`steps`, `results`, …). A
 * lookup goes to the one journal it names; a walk goes over every journal. They are Maps
 * and Sets, as the fields they stand for were, so code that walks a state sees what it saw.
 */

const readOnly = () =>
  new HarnessError(
    'INVALID_ARGUMENT',
    'A folded session state is read-only: only the fold (applyEntry) changes it. Append a record to the log instead.',
  )

/** A map whose entries are computed from the journals: `each` walks them, `lookup` finds one. */
export class JournalMap<V> extends Map<string, V> {
  readonly #each: () => Iterable<[string, V]>
  readonly #lookup: (key: string) => V | undefined

  constructor(each: () => Iterable<[string, V]>, lookup: (key: string) => V | undefined) {
    super()
    this.#each = each
    this.#lookup = lookup
  }

  override get(key: string): V | undefined {
    return this.#lookup(key)
  }
  override has(key: string): boolean {
    return this.#lookup(key) !== undefined
  }
  override get size(): number {
    let n = 0
    for (const _ of this.#each()) n++
    return n
  }
  override *entries(): MapIterator<[string, V]> {
    yield* this.#each()
  }
  override *keys(): MapIterator<string> {
    for (const [key] of this.#each()) yield key
  }
  override *values(): MapIterator<V> {
    for (const [, value] of this.#each()) yield value
  }
  override [Symbol.iterator](): MapIterator<[string, V]> {
    return this.entries()
  }
  override forEach(fn: (value: V, key: string, map: Map<string, V>) => void): void {
    for (const [key, value] of this.#each()) fn(value, key, this)
  }
  override set(): this {
    throw readOnly()
  }
  override delete(): boolean {
    throw readOnly()
  }
  override clear(): void {
    throw readOnly()
  }
}

/** A set of the ids of the journals for which `holds` is true. */
export class JournalSet extends Set<string> {
  readonly #ids: () => Iterable<string>
  readonly #holds: (id: string) => boolean

  constructor(ids: () => Iterable<string>, holds: (id: string) => boolean) {
    super()
    this.#ids = ids
    this.#holds = holds
  }

  override has(id: string): boolean {
    return this.#holds(id)
  }
  override get size(): number {
    let n = 0
    for (const _ of this.#ids()) n++
    return n
  }
  override *values(): SetIterator<string> {
    yield* this.#ids()
  }
  override keys(): SetIterator<string> {
    return this.values()
  }
  override *entries(): SetIterator<[string, string]> {
    for (const id of this.#ids()) yield [id, id]
  }
  override [Symbol.iterator](): SetIterator<string> {
    return this.values()
  }
  override forEach(fn: (value: string, key: string, set: Set<string>) => void): void {
    for (const id of this.#ids()) fn(id, id, this)
  }
  override add(): this {
    throw readOnly()
  }
  override delete(): boolean {
    throw readOnly()
  }
  override clear(): void {
    throw readOnly()
  }
}
