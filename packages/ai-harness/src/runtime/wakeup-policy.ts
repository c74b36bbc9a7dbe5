import { type Clock, WAITING_FOR_PERSON } from '../contract/types.js'
import { approvalWait } from './approval-records.js'
import { askWait } from './ask-records.js'
import { inboxLogId } from './inbox-log.js'
import { agentWait, type ParkWait, unknownWait } from './park-wait.js'
import type { ParkedRecord } from './records.js'
import { openApprovalsOf, parkedCall, type SessionState } from './session-fold.js'
import { sleepWait } from './sleep-records.js'
import { durableNow, type GuardedStore } from './store-boundary.js'

/** Each park reason's rule, from the feature that parks for it. */
function waitOf(parked: ParkedRecord, state: SessionState): ParkWait {
  switch (parked.reason) {
    case 'sleep':
      return sleepWait(parked.until)
    case 'ask':
      return askWait(state.calls.get(parked.toolCallId))
    case 'approval':
      return approvalWait(openApprovalsOf(state).length)
    case 'agent':
      return agentWait()
    default:
      return unknownWait()
  }
}

/**
 * Where a session's one wakeup must be, so that no session waits with nothing to wake
 * it. The rules:
 *
 * - a turn that runs keeps its wakeup a renewal period before the lease's expiry, so a
 *   worker is there when a dead host's lease runs out (see `SessionLease`);
 * - a sleeping turn is due at its wake time; a turn that waits for a person (a question,
 *   an approval) has its wakeup at `WAITING_FOR_PERSON`, never due, so stores can list
 *   it (`sessions.waiting`); the answer or decision makes it due at once, checked again after the write;
 * - a turn that waits for its child session has no wakeup (the child wakes it);
 * - a finished turn wakes its parent (an agent tool's session) before its own wakeup goes;
 * - the wakeup is cancelled only when the log, as read, says nothing is open: after a
 *   write whose outcome is unknown it stays, so a worker looks at the session.
 */
export class WakeupPolicy {
  #parentWoken = false

  constructor(
    private readonly store: GuardedStore,
    private readonly sessionId: string,
    private readonly state: SessionState,
    private readonly clock: Clock,
  ) {}

  /** Whether a parked turn may go on now; if not, its wakeup is set for when it may. */
  async stillWaiting(): Promise<boolean> {
    const parked = parkedCall(this.state)
    if (!parked) return false
    const wait = waitOf(parked, this.state)
    // The wake time came from the store's clock where it has one: compare it with the same clock.
    if (wait.kind === 'time' && wait.at > (await durableNow(this.store, this.clock))) {
      await this.store.wakeups?.schedule(this.sessionId, wait.at)
      return true
    }
    if (wait.kind === 'person' && wait.open) {
      await this.#waitUnlessAnswered(WAITING_FOR_PERSON)
      return true
    }
    return false
  }

  /**
   * True while the log, as read, says the parked turn waits for a person: a question with
   * no answer, or a batch with an approval not yet decided (it waits until every one is).
   */
  waitsForPerson(): boolean {
    const parked = parkedCall(this.state)
    if (!parked) return false
    const wait = waitOf(parked, this.state)
    return wait.kind === 'person' && wait.open
  }

  /**
   * After a turn parked: due at the wake time of a sleep; waiting for a person (marked by
   * the never-due `WAITING_FOR_PERSON`) until an answer arrives; no wakeup while a child
   * session runs. A park reason this policy does not know counts as waiting for a person.
   */
  async parked(parked: ParkedRecord): Promise<void> {
    const wait = waitOf(parked, this.state)
    if (wait.kind === 'time') await this.store.wakeups?.schedule(this.sessionId, wait.at)
    else await this.#waitUnlessAnswered(wait.kind === 'child' ? null : WAITING_FOR_PERSON)
  }

  /** After a turn finished: the parent first (if its wakeup fails, ours stays and a worker tries again), then ours. */
  async finished(): Promise<void> {
    await this.#wakeParent()
    await this.#cancelUnlessQueued()
  }

  /**
   * When a host lets the session go. `known` is false when a write's outcome is still
   * unknown: then the wakeup stays whatever the state says. A worker that finds an
   * agent's session finished (`wakeParent`) wakes its parent first: the host that
   * finished it may have died before it could.
   */
  async letGo(known: boolean, options: { wakeParent: boolean }): Promise<void> {
    if (!known || this.state.openTurn) return
    if (options.wakeParent && this.state.turns > 0) await this.#wakeParent()
    await this.#cancelUnlessQueued()
  }

  /**
   * Cancels the wakeup unless a prompt is queued in the inbox. It looks first: a session
   * with a queued prompt keeps its wakeup (made due now), so no failure after a cancel can
   * leave that prompt with nothing to wake it. After the cancel it looks again: a prompt
   * submitted between the look and the cancel (whose wakeup the cancel removed) makes the
   * session due again, and if that look fails the session is made due all the same. A
   * submit after the second look schedules its own wakeup after the cancel.
   */
  async #cancelUnlessQueued(): Promise<void> {
    const wakeups = this.store.wakeups
    if (!wakeups) return
    if (await this.#queued()) return this.dueNow()
    await wakeups.cancel(this.sessionId)
    let queued: boolean
    try {
      queued = await this.#queued()
    } catch (error) {
      await this.dueNow().catch(() => {})
      throw error
    }
    if (queued) await this.dueNow()
  }

  async #queued(): Promise<boolean> {
    return (await this.store.read(inboxLogId(this.sessionId), { after: this.state.inboxSeq, limit: 1 })).length > 0
  }

  /** A child agent's cut turn: its parent decides it, so the parent is due now and this session waits for it. */
  async deferToParent(): Promise<void> {
    const parent = this.state.parent
    if (!parent || !this.store.wakeups) return
    await this.store.wakeups.schedule(parent.sessionId, await durableNow(this.store, this.clock))
    await this.store.wakeups.cancel(this.sessionId)
  }

  /** Makes the session due at once: a hand-off, an answer. */
  async dueNow(): Promise<void> {
    if (this.store.wakeups) await this.store.wakeups.schedule(this.sessionId, await durableNow(this.store, this.clock))
  }

  async #wakeParent(): Promise<void> {
    const parent = this.state.parent
    if (!parent || this.#parentWoken || !this.store.wakeups) return
    await this.store.wakeups.schedule(parent.sessionId, await durableNow(this.store, this.clock))
    this.#parentWoken = true
  }

  /**
   * Cancels the wakeup of a session that waits for an answer (`at` null), or moves it to
   * `at` (`WAITING_FOR_PERSON`). An answer may land between our read of the log and this
   * write, and its wakeup would be lost with it: so after the write, look at the tail again
   * and make the session due at once if anything arrived (or if the tail cannot be read: a
   * worker that finds nothing new only parks it again).
   */
  async #waitUnlessAnswered(at: number | null): Promise<void> {
    const wakeups = this.store.wakeups
    if (!wakeups) return
    if (at === null) await wakeups.cancel(this.sessionId)
    else await wakeups.schedule(this.sessionId, at)
    let arrived: boolean
    try {
      arrived = (await this.store.read(this.sessionId, { after: this.state.nextSeq - 1, limit: 1 })).length > 0
    } catch (error) {
      await this.dueNow().catch(() => {})
      throw error
    }
    if (arrived) await this.dueNow()
  }
}
