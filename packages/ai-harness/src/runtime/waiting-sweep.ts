import type { Clock } from '../contract/types.js'
import { readAndFold } from './session-fold.js'
import type { GuardedStore } from './store-boundary.js'
import { WakeupPolicy } from './wakeup-policy.js'

/**
 * Finds sessions whose wakeup says "waiting for a person" but whose log holds the answer
 * or decision, and makes them due.
 *
 * An answer makes its session due. A host that parks the session at the same moment,
 * from a log it read before the answer, moves the wakeup back to `WAITING_FOR_PERSON`
 * and then reads the log again to undo that; if it dies between the two, or every write
 * after the read fails, nothing else would ever wake the answered session. So a worker
 * reads the waiting sessions now and then, one page a look, from where the last look
 * stopped, and wakes those the log says no longer wait. It writes only for those.
 */
export class WaitingSweep {
  #after: string | undefined
  #lastLook = Number.NEGATIVE_INFINITY

  constructor(
    private readonly store: GuardedStore,
    private readonly clock: Clock,
    private readonly pageSize: number,
    /** The least time between two looks of {@link lookIfDue}. */
    private readonly everyMs: number,
  ) {}

  /** {@link look}, when `everyMs` has passed since the last look; else nothing. */
  async lookIfDue(): Promise<string[]> {
    if (this.clock.now() - this.#lastLook < this.everyMs) return []
    this.#lastLook = this.clock.now()
    return this.look()
  }

  /** One page of the waiting sessions; returns the ids it made due. */
  async look(): Promise<string[]> {
    const waiting = this.store.sessions?.waiting
    if (!waiting || !this.store.wakeups) return []
    const page = await waiting.call(this.store.sessions, {
      ...(this.#after === undefined ? {} : { after: this.#after }),
      limit: this.pageSize,
    })
    // A short page is the end: the next look starts from the first waiting session again.
    this.#after = page.length < this.pageSize ? undefined : page.at(-1)
    const woken: string[] = []
    for (const sessionId of page) {
      const state = await readAndFold(this.store, sessionId)
      const policy = new WakeupPolicy(this.store, sessionId, state, this.clock)
      // A session with no open turn, or a parked turn that no longer waits for a person: a worker decides.
      if (state.openTurn && policy.waitsForPerson()) continue
      await policy.dueNow()
      woken.push(sessionId)
    }
    return woken
  }
}
