import type { Queryable } from './driver-types.js'
import { isConnectionLoss } from './transient.js'

/** The transaction failed and so did its rollback: the connection is unusable. */
export class BrokenConnection extends Error {
  constructor(override readonly cause: unknown) {
    super('rollback failed')
  }
}

/** BEGIN, `fn`, COMMIT on one connection; ROLLBACK when `fn` throws. */
export async function inTransaction<T>(tx: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  await tx.query('BEGIN')
  let result: T
  try {
    result = await fn(tx)
  } catch (error) {
    // A lost connection (or one past its deadline) cannot roll back: the server does when it sees it gone.
    if (isConnectionLoss(error)) throw new BrokenConnection(error)
    try {
      await tx.query('ROLLBACK')
    } catch {
      throw new BrokenConnection(error)
    }
    throw error
  }
  await tx.query('COMMIT')
  return result
}
