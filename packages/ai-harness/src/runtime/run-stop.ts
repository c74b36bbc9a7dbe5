import { isParkSignal, type ParkSignal } from './park.js'

/**
 * The one stop authority of a run of a turn: its abort signal, and why it stopped. The
 * first reason wins: a park signal (the run stops on purpose: a sleep, a question, an
 * approval, a child that waits) or the session's own failure (a lost write or lease). A
 * stop from outside (a cancel, a hand-off, a close) aborts the signal with no reason of
 * the run's own. Tools never see a reason: a step that meets one stays pending, and the
 * harness ends the call (see `LiveToolCall.raceStop`).
 */
export class RunStop {
  /** The controller TanStack AI's `chat()` and the run's tools get the signal of. */
  readonly controller = new AbortController()
  #reason: object | undefined

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** The park signal or own failure the run stopped for, if any. */
  get reason(): object | undefined {
    return this.#reason
  }

  /** True once the run stopped, for a reason of its own or from outside. */
  get stopped(): boolean {
    return this.#reason !== undefined || this.controller.signal.aborted
  }

  /** True once the run stopped because a call parked (on purpose: no failure). */
  get parked(): boolean {
    return isParkSignal(this.#reason)
  }

  /** Stops the run for the session's own failure, or, with no reason, from outside. */
  stop(reason?: object): void {
    this.#reason ??= reason
    this.controller.abort()
  }

  /** Stops the run on purpose: the turn waits, and a worker or an answer resumes it. */
  park(signal: ParkSignal): void {
    this.stop(signal)
  }
}
