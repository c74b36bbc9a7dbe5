import pg from 'pg'
import { pgConfig } from './pg-config.js'
import { type RequestCounter, sqlKind } from './requests.js'

/**
 * A real `pg.Pool` whose connections count every query they send. Patching the
 * connection (not the pool) catches `pool.query` and checked-out clients alike, for
 * our store and for the peers, so every library is counted the same way.
 */
export function countedPool(requests: RequestCounter, max: number): pg.Pool {
  const pool = new pg.Pool({ ...pgConfig(), max })
  // pg ends the process on an idle connection error without a listener.
  pool.on('error', (error) => process.stderr.write(`idle PostgreSQL connection lost: ${error.message}\n`))
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown
    ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0]
      const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '')
      const { kind, name } = sqlKind(text)
      requests.add(kind, name)
      return query(...args)
    }
  })
  return pool
}
