/**
 * PGlite: one in-process connection (no network, so no deadline). Its `query()` parses
 * and plans every call again, which costs more than the statement itself; so each of the
 * store's statements is prepared once per PGlite instance with SQL `PREPARE`, and run
 * with `EXECUTE`. `EXECUTE` takes no bind parameters, so its arguments go in as string
 * literals, made by `literal()` below and checked with hostile text in the tests.
 */
import { HarnessError } from '@tanstack/ai-harness/store'
import type { Driver, PGliteLike, QueryResultLike, Queryable, Row } from './driver-types.js'
import { statementNamer } from './statement-name.js'

const SPECIAL = /[\\']/g

/**
 * A string literal that reads back as exactly `text`. In an `E'…'` literal only `\` and
 * `'` are special, whatever the session's settings (`standard_conforming_strings`,
 * `backslash_quote`); both are doubled. PostgreSQL text cannot hold NUL, and a NUL
 * would end the statement's C string early, so it is refused.
 */
export function literal(text: string): string {
  if (text.includes('\u0000')) {
    throw new HarnessError('INVALID_ARGUMENT', 'A value for PostgreSQL contains NUL (U+0000), which text cannot hold; remove it.')
  }
  return `E'${text.replace(SPECIAL, (c) => (c === '\\' ? '\\\\' : "''"))}'`
}

/** A statement argument as a literal; `EXECUTE` casts it to the parameter's type. */
function argument(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  if (typeof value === 'string') return literal(value)
  if (typeof value === 'number' && Number.isFinite(value)) return literal(String(value))
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (Array.isArray(value)) {
    // An array literal: each element double-quoted, `\` and `"` escaped inside it; null as NULL.
    const elements = value.map((element) =>
      element === null || element === undefined ? 'NULL' : `"${String(element).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`,
    )
    return literal(`{${elements.join(',')}}`)
  }
  throw new TypeError(`The store cannot send ${typeof value} to PGlite.`)
}

const sqlStateOf = (error: unknown) => (error as { code?: unknown } | null)?.code

/**
 * The statements prepared on each PGlite instance, shared by every store on it: `true`
 * once prepared, or the PREPARE under way.
 */
const preparedOn = new WeakMap<PGliteLike, Map<string, true | Promise<void>>>()

export function pgliteDriver(db: PGliteLike): Driver {
  const prepared = preparedOn.get(db) ?? new Map<string, true | Promise<void>>()
  preparedOn.set(db, prepared)
  const nameOf = statementNamer()

  const prepare = (name: string, text: string): true | Promise<void> => {
    let state = prepared.get(name)
    if (state === undefined) {
      state = db.query(`PREPARE ${name} AS ${text}`).then(
        () => void prepared.set(name, true),
        (error: unknown) => {
          // 42P05: prepared already (by another copy of this package on the same instance).
          if (sqlStateOf(error) === '42P05') return void prepared.set(name, true)
          prepared.delete(name) // e.g. the tables are not there yet: prepare again next time
          throw error
        },
      )
      prepared.set(name, state)
    }
    return state
  }

  // exec() is one call into PGlite (a simple query); query() is several.
  const run = async (text: string): Promise<Row[]> => {
    const result: QueryResultLike | undefined = db.exec ? (await db.exec(text))[0] : await db.query(text)
    return (result?.rows ?? []) as Row[]
  }

  const query: Queryable['query'] = async (text, values) => {
    if (values === undefined) return (await db.query(text)).rows as Row[]
    const name = nameOf(text)
    const state = prepare(name, text)
    if (state !== true) await state
    const call = values.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${values.map(argument).join(', ')})`
    try {
      return await run(call)
    } catch (error) {
      // 26000: the app deallocated it (DEALLOCATE ALL, DISCARD ALL); prepare it again once.
      if (sqlStateOf(error) !== '26000') throw error
      prepared.delete(name)
      await prepare(name, text)
      return run(call)
    }
  }

  return {
    kind: 'pglite',
    query,
    // PGlite sends BEGIN and COMMIT itself and queues every other call behind an open
    // transaction. Transactions (delete, migrate) are rare: their statements are not prepared.
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({ query: async (text, values) => (await tx.query(text, values === undefined ? undefined : [...values])).rows as Row[] }),
      ),
    close: () => db.close(),
    async warm(texts) {
      for (const text of texts) await Promise.resolve(prepare(nameOf(text), text)).catch(() => {})
    },
  }
}
