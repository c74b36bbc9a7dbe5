import { HarnessError } from '../contract/errors.js'

/** What a session object of this host does when another open of its session here takes over. */
export interface LocalDriver {
  /**
   * Stops its run (waiting at most `stopTimeoutMs` for a step in flight, whose value still
   * lands), lets its writes settle, and releases the lease, leaving the wakeup as it is.
   */
  giveWay(): Promise<void>
}

/**
 * The session objects of one host that hold their session's lease: at most one per session.
 *
 * All objects of a host share one lease owner, so the store cannot tell two of them apart:
 * without this, a worker's resume of a child and the parent's cancel of that child, in one
 * process, would both drive it, and only a store's fence would stop the older one (DynamoDB
 * and S3 have none). So a second open of a session held here takes over: the first object
 * gives way before the lease is taken again. A worker's resume (or `host.drive`) of a
 * session held here is busy instead: the object that holds it drives it.
 */
export class LocalDrivers {
  readonly #held = new Map<string, LocalDriver>()
  /** Opens of one session run one after the other: the check and the take are one step. */
  readonly #turns = new Map<string, Promise<void>>()

  /**
   * Runs `open` for `sessionId` once no other open of it here is in progress, after the
   * object that holds it here (if any) gave way; a resume finds it busy instead.
   */
  async take<T extends LocalDriver>(sessionId: string, resumeOnly: boolean, open: () => Promise<T | undefined>): Promise<T | undefined> {
    const before = this.#turns.get(sessionId)
    let done = () => {}
    const mine = new Promise<void>((resolve) => {
      done = resolve
    })
    const queue = (before ?? Promise.resolve()).then(() => mine)
    this.#turns.set(sessionId, queue)
    try {
      await before
      const holder = this.#held.get(sessionId)
      if (holder) {
        if (resumeOnly) throw heldHere(sessionId)
        await holder.giveWay()
        // giveWay lets the lease go, which forgets the holder; a holder that failed to is forgotten here.
        if (this.#held.get(sessionId) === holder) this.#held.delete(sessionId)
      }
      const session = await open()
      if (session) this.#held.set(sessionId, session)
      return session
    } finally {
      done()
      if (this.#turns.get(sessionId) === queue) this.#turns.delete(sessionId)
    }
  }

  /** A session object let its lease go (it parked, was closed, or gave way). */
  forget(sessionId: string, driver: LocalDriver): void {
    if (this.#held.get(sessionId) === driver) this.#held.delete(sessionId)
  }
}

function heldHere(sessionId: string): HarnessError {
  return new HarnessError(
    'LEASE_HELD',
    `Session ${JSON.stringify(sessionId)} is driven by another session object of this host; it goes on with the session, so there is nothing to resume here.`,
  )
}
