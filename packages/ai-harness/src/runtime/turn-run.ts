import type { StreamChunk } from '@tanstack/ai'
import type { ParkedRecord } from './records.js'
import { RunStop } from './run-stop.js'
import type { SessionWriter } from './session-writer.js'
import { after } from './timings.js'

const END: IteratorReturnResult<undefined> = { done: true, value: undefined }

/**
 * How a run of a turn ended, kept in one place per kind of run (the end of the chat loop,
 * a recovery that does not chat). `deleted`: the session's log was deleted while this host
 * drove it; nothing more was written.
 */
export type TurnRunOutcome =
  | { kind: 'finished' }
  | { kind: 'parked'; parked: ParkedRecord }
  | { kind: 'stopped' }
  | { kind: 'failed' }
  | { kind: 'deleted' }

/**
 * How a run of a turn ends, as the run returns it: its outcome, the chunks that tell the
 * client (a question, approvals, the park), and the error its stream ends with, if any.
 * The driver keeps the outcome before it streams the tail: a reader that stops reading at
 * the question still leaves the run parked.
 */
export interface TurnRunEnd {
  readonly outcome: TurnRunOutcome
  readonly tail: readonly StreamChunk[]
  readonly error?: unknown
}

/** The chunks of a run of a turn, and how it ended (undefined: it did not run, e.g. nothing to resume). */
export type TurnRunStream = AsyncGenerator<StreamChunk, TurnRunEnd | undefined>

/** What a run of a turn shares with the code that drives it (the chat loop, a recovery). */
export interface TurnRunControl {
  /** The run's stop authority: its signal, and why it stopped (see `RunStop`). */
  readonly runStop: RunStop
  /** Why the session stopped (a conflict, a lost lease), if it did. */
  stopped(): Error | undefined
  /** Calls `listener` if a stop gives up waiting for the run (see `TurnRun.stop`); returns the way to stop listening. */
  onAbandoned?(listener: () => void): () => void
}

/**
 * One run of a turn on this host: its own writer scope, its abort signal, and a way to
 * stop it that never hangs. A run stopped while a step function never settles is
 * abandoned after a bounded wait: its stream ends, its scope writes nothing more, and
 * the step's outcome is unknown (the idempotency key is for that), so another host can
 * resume the turn.
 */
export class TurnRun implements TurnRunControl {
  readonly runStop = new RunStop()
  /** Settles when the run's code has ended, however it ended. */
  readonly done: Promise<void>
  #finish: () => void = () => {}
  #abandoned = false
  #stopRequested = false
  #abandon: () => void = () => {}
  readonly #whenAbandoned: Promise<IteratorReturnResult<undefined>>
  /** The writer scopes of the step attempts in flight (see `stepScope`). */
  readonly #stepScopes = new Map<SessionWriter, Promise<void>>()

  constructor(
    /** The run's own scope of the session writer. */
    readonly writer: SessionWriter,
    private readonly stoppedBy: () => Error | undefined,
  ) {
    this.done = new Promise((resolve) => {
      this.#finish = resolve
    })
    this.#whenAbandoned = new Promise((resolve) => {
      this.#abandon = () => resolve(END)
    })
  }

  stopped(): Error | undefined {
    return this.stoppedBy()
  }

  /** The controller of the run's signal (the stop authority's). */
  get abortController(): AbortController {
    return this.runStop.controller
  }

  readonly #onAbandoned = new Set<() => void>()

  onAbandoned(listener: () => void): () => void {
    this.#onAbandoned.add(listener)
    return () => this.#onAbandoned.delete(listener)
  }

  /** Stopped from outside (a hand-off, a cancel, a close), or its session's writer stopped (a conflict, a lost lease); a park is no stop. */
  #wasStopped(): boolean {
    return this.#stopRequested || this.stoppedBy() !== undefined
  }

  /** True once a stop gave up waiting for the run: whatever it does later counts for nothing. */
  get abandoned(): boolean {
    return this.#abandoned
  }

  /**
   * A writer scope for one step attempt, while the run may still write: it outlives the
   * run's own scope by the stop's wait, so an attempt in flight when the run is stopped
   * (a hand-off, a cancel) and that finishes within the wait still logs its value, and a
   * later run does not call its fn again. Call `release` when the attempt ended.
   */
  stepScope(): { writer: SessionWriter; release: () => void } {
    this.writer.assertWritable()
    const writer = this.writer.scope()
    let release = () => {}
    this.#stepScopes.set(
      writer,
      new Promise<void>((resolve) => {
        release = resolve
      }),
    )
    return {
      writer,
      release: () => {
        this.#stepScopes.delete(writer)
        release()
      },
    }
  }

  /** Marks the run's code as ended. */
  finish(): void {
    this.#finish()
  }

  /**
   * Stops the run: its scope refuses every later write, its tools see the abort signal,
   * and this waits up to `timeoutMs` for its code to end. Resolves true when it ended,
   * false when it was abandoned.
   */
  async stop(reason: string, timeoutMs: number): Promise<boolean> {
    this.#stopRequested = true
    this.writer.close(reason)
    this.runStop.stop()
    let cancelTimer = () => {}
    // The run's code and its step attempts in flight: the chat loop may end before a tool's attempt does.
    const attempts = Promise.all([...this.#stepScopes.values()])
    const ended = await Promise.race([
      Promise.all([this.done, attempts]).then(() => true),
      new Promise<boolean>((resolve) => {
        cancelTimer = after(timeoutMs, () => resolve(false))
      }),
    ])
    cancelTimer()
    // What an attempt finishes after the wait counts for nothing: another host may resume the turn now.
    for (const scope of this.#stepScopes.keys()) scope.close(reason)
    this.#stepScopes.clear()
    if (!ended) {
      this.#abandoned = true
      this.#abandon()
      for (const listener of this.#onAbandoned) listener()
      this.#onAbandoned.clear()
    }
    return ended
  }

  /**
   * The chunks of `source`, until it ends or the run is abandoned. Once the run was stopped
   * (a hand-off, a cancel, a lost lease or a conflict), its code runs to its end but its
   * chunks are dropped: nothing it does lands in the log any more, so a client must not see
   * it either (a tool's error result for a call the log never settles, say).
   */
  stream(source: AsyncGenerator<StreamChunk>): AsyncIterator<StreamChunk> {
    const next = async (): Promise<IteratorResult<StreamChunk>> => {
      for (;;) {
        if (this.#abandoned) return END
        const result = await Promise.race([source.next(), this.#whenAbandoned])
        if (result.done || !this.#wasStopped()) return result
      }
    }
    return {
      next,
      return: async () => {
        // A consumer that stops reading stops the run; a run that never ends is not waited for.
        if (!this.#abandoned) await Promise.race([source.return(undefined), this.#whenAbandoned])
        return END
      },
    }
  }
}
