/** Why a tool call stops on purpose: a long sleep, a question, an approval, a child that waits. */
export type ParkReason = 'sleep' | 'ask' | 'agent' | 'approval'

/**
 * A park: a tool call stops on purpose (a long sleep, a question or an approval for a
 * person, a child session that waits). The harness ends the run without settling the call,
 * logs why the turn waits, and a worker (or an answer) resumes it later. A value the stop
 * authority keeps, never an error: nothing throws it, and no tool sees it.
 */
export interface Park {
  readonly toolCallId: string
  readonly reason: ParkReason
  /** For a sleep: when to wake. */
  readonly until: number | null
  /** What the stream tells the client, e.g. the question. */
  readonly event: Record<string, unknown>
}

/**
 * Why a run (or one of its calls) stopped, as the stop authority keeps it: a park (on
 * purpose), or a failure of the session's own machinery (its writer, lease, store, a
 * child's machinery). The harness knows its own failures by this value, never by looking
 * the error up: a tool whose own code throws `LEASE_LOST` (from a nested harness with its
 * own session) is a tool that failed.
 */
export type StopReason = { readonly kind: 'park'; readonly park: Park } | { readonly kind: 'failure'; readonly error: unknown }

/**
 * The one stop authority of a run of a turn: its abort signal, and why it stopped. The
 * first reason wins: a park or the session's own failure. A stop from outside (a cancel,
 * a hand-off, a close) aborts the signal with no reason of the run's own. Tools never see
 * a reason: a step that meets one stays pending, and the harness ends the call (see
 * `CallStop.race`).
 */
export class RunStop {
  /** The controller TanStack AI's `chat()` and the run's tools get the signal of. */
  readonly controller = new AbortController()
  #reason: StopReason | undefined

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** The park or own failure the run stopped for, if any. */
  get reason(): StopReason | undefined {
    return this.#reason
  }

  /** True once the run stopped, for a reason of its own or from outside. */
  get stopped(): boolean {
    return this.#reason !== undefined || this.controller.signal.aborted
  }

  /** True once the run stopped because a call parked (on purpose: no failure). */
  get parked(): boolean {
    return this.#reason?.kind === 'park'
  }

  /** Stops the run for the session's own failure `error`, or, with none, from outside. */
  stop(error?: unknown): void {
    if (error !== undefined) this.#reason ??= { kind: 'failure', error }
    this.controller.abort()
  }

  /** Stops the run on purpose: the turn waits, and a worker or an answer resumes it. */
  park(park: Park): void {
    this.#reason ??= { kind: 'park', park }
    this.controller.abort()
  }

  /** Stops the run for a reason one of its calls met. */
  stopFor(reason: StopReason): void {
    if (reason.kind === 'park') this.park(reason.park)
    else this.stop(reason.error)
  }
}

/** How `CallStop.race` ends: what execute returned, or the stop a step of the call met first. */
export type RaceResult<T> = { readonly stopped: false; readonly value: T } | { readonly stopped: true; readonly reason: StopReason }

/**
 * The stop authority of one tool call: the first park or own failure its steps, waits and
 * writes met. Whatever meets one notes it here (`fail`, `park`), and the harness asks here
 * (`reason`) whether an error is its own: a lost write the tool wrapped in its own error, or
 * swallowed, still stops the run.
 */
export class CallStop {
  #reason: StopReason | undefined
  #racing = false
  #noteStop: () => void = () => {}
  /** Settles when the call meets a stop. */
  readonly #whenStopped = new Promise<void>((resolve) => {
    this.#noteStop = resolve
  })

  /** The first park or own failure the call met, if any. */
  get reason(): StopReason | undefined {
    return this.#reason
  }

  /** Notes `error` as the session's own failure (the first reason wins) and returns it, to throw. */
  fail(error: unknown): unknown {
    this.#note({ kind: 'failure', error })
    return error
  }

  /** Runs a call of the session's machinery; what it throws is noted as the session's own failure. */
  async own<T>(work: () => T | Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      throw this.fail(error)
    }
  }

  /**
   * Parks the call: notes the park, and returns the parked step, a promise that does not
   * settle while the harness races the call against its stop (the tool's `catch` and
   * `finally` see nothing). A call nobody races (a cancel's probe of the call) gets an
   * error instead, as its caller expects: the step did not finish.
   */
  park(park: Park): Promise<never> {
    this.#note({ kind: 'park', park })
    return this.pending()
  }

  /**
   * What a step that met the call's stop gives the tool: a promise that does not settle
   * while the call is raced, or `thrown` for a call nobody races.
   */
  pending(thrown?: unknown): Promise<never> {
    if (this.#racing) return new Promise<never>(() => {})
    return Promise.reject(thrown ?? stopError(this.#reason))
  }

  /**
   * Runs the call's execute against its stop: a step that parks or meets the session's own
   * failure does not settle, so no control flow passes through the tool's code; the
   * harness ends the call here instead, and the call runs again from its start when the
   * session resumes. Resolves with what execute returned or the stop; throws what execute threw.
   */
  async race<T>(execute: () => Promise<T>): Promise<RaceResult<Awaited<T>>> {
    this.#racing = true
    const stopped = this.#whenStopped.then((): typeof STOPPED => STOPPED)
    let value: Awaited<T> | typeof STOPPED
    try {
      value = await Promise.race([execute(), stopped])
    } catch (error) {
      // What the tool threw after its call met a stop (an agent call's child failure) is the stop.
      if (this.#reason) return { stopped: true, reason: this.#reason }
      throw error
    }
    // A stop noted as the tool returned still stops the run.
    if (value === STOPPED || this.#reason) return { stopped: true, reason: this.#reason! }
    return { stopped: false, value }
  }

  #note(reason: StopReason): void {
    this.#reason ??= reason
    this.#noteStop()
  }
}

/** What `race` sees when the stop came first. */
const STOPPED = Symbol('stopped')

/**
 * The error that stands for a stop where code outside the harness must get one: a call
 * nobody races, where its step parked; `chat()`, for a call the run's stop ended (the run
 * ends without its result). A failure is its own error.
 */
export function stopError(reason: StopReason | undefined): unknown {
  if (reason?.kind === 'failure') return reason.error
  const park = reason?.kind === 'park' ? reason.park : undefined
  return new Error(`Tool call ${park?.toolCallId ?? ''} waits (${park?.reason ?? 'stopped'}); the harness resumes it later.`)
}
