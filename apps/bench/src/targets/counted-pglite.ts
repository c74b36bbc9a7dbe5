import type { PGlite } from '@electric-sql/pglite'
import type { PGliteLike } from '@tanstack/ai-harness-postgres'
import { type RequestCounter, sqlKind } from './requests.js'

/** Counts each statement sent into PGlite; it is in-process, so a "request" is a call into the WASM Postgres. */
export function countedPGlite(db: PGlite, requests: RequestCounter): PGliteLike {
  const count = (text: string) => {
    const { kind, name } = sqlKind(text)
    requests.add(kind, name)
  }
  return {
    query(text, params) {
      count(text)
      return db.query(text, params)
    },
    transaction(callback) {
      requests.add('other', 'BEGIN')
      return db.transaction((tx) =>
        callback({
          query(text, params) {
            count(text)
            return tx.query(text, params)
          },
        }),
      )
    },
    close: () => db.close(),
  }
}
