import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import type { PgPoolClientLike, PgPoolLike } from '../src/driver-types.js'
import { pgPoolDriver } from '../src/pg-driver.js'

// pg-pool listens for 'error' only on idle connections. A socket lost while a connection
// is checked out emits 'error' on it; with no listener, Node ends the process. The CI of
// 2026-11 saw exactly that (an unhandled ECONNRESET) when a proxy reset a busy connection.

class FakeConnection extends EventEmitter implements PgPoolClientLike {
  released: Array<Error | boolean | undefined> = []
  constructor(private readonly onQuery: (self: FakeConnection) => Promise<{ rows: unknown[] }>) {
    super()
  }
  query() {
    return this.onQuery(this)
  }
  release(error?: Error | boolean) {
    this.released.push(error)
  }
}

function poolOf(connection: FakeConnection): PgPoolLike {
  return { connect: async () => connection, query: async () => ({ rows: [] }), end: async () => {}, totalCount: 1 }
}

const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })

describe('a pooled connection that loses its socket while checked out', () => {
  it('does not raise an unhandled error event, and the call fails with the socket error', async () => {
    const connection = new FakeConnection(async (self) => {
      const error = reset()
      // EventEmitter.emit('error') throws when nobody listens: this is what would end the process.
      self.emit('error', error)
      throw error
    })
    const driver = pgPoolDriver(poolOf(connection), { timeoutMs: 1000 })
    await expect(driver.query('SELECT 1', [])).rejects.toMatchObject({ code: 'ECONNRESET' })
    expect(connection.released).toHaveLength(1)
    expect(connection.released[0]).toBeInstanceOf(Error) // the pool destroys it
    // It is on its way out: a late error from its closing socket is still absorbed.
    expect(() => connection.emit('error', reset())).not.toThrow()
  })

  it('a healthy connection goes back to the pool without the extra listener', async () => {
    const connection = new FakeConnection(async () => ({ rows: [{ one: 1 }] }))
    const driver = pgPoolDriver(poolOf(connection), { timeoutMs: 1000 })
    expect(await driver.query('SELECT 1', [])).toEqual([{ one: 1 }])
    expect(connection.listenerCount('error')).toBe(0)
    expect(connection.released).toEqual([undefined])
  })
})
