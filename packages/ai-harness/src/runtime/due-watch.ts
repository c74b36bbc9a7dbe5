import type { WakeupStore } from '../contract/types.js'

/**
 * A started worker's subscription to the store's notifications (`wakeups.watch`): a wakeup
 * made due at once elsewhere (a hand-off, an answer) is claimed when it is told, not at the
 * next poll. Claims run one at a time, and a notification during one claims again after it;
 * the sessions claimed are driven beside the polls (`drive` dedupes a session driven already),
 * so a turn that runs long never holds the next claim.
 */
export class DueWatch {
  #claiming: Promise<unknown> | undefined
  #again = false
  #stop: Promise<(() => Promise<void>) | undefined> | undefined
  readonly #driving = new Set<Promise<unknown>>()

  constructor(
    private readonly wakeups: WakeupStore,
    private readonly claim: () => Promise<string[]>,
    private readonly drive: (sessionId: string) => Promise<unknown>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Listens, where the store can tell; without `watch` the polls alone find due wakeups. */
  start(): void {
    const watch = this.wakeups.watch
    if (!watch || this.#stop) return
    this.#stop = watch
      .call(this.wakeups, () => this.#told())
      .catch((error: unknown) => {
        this.onError(error)
        return undefined
      })
  }

  /** Stops listening; resolves when the claims and drives it started are done. */
  async stop(): Promise<void> {
    const stop = await this.#stop
    this.#stop = undefined
    await stop?.().catch(this.onError)
    await Promise.allSettled([this.#claiming, ...this.#driving])
  }

  #told(): void {
    if (!this.#stop) return
    if (this.#claiming) {
      this.#again = true
      return
    }
    this.#claiming = this.claim()
      .then((sessionIds) => {
        for (const sessionId of sessionIds) {
          const driving: Promise<unknown> = this.drive(sessionId).finally(() => this.#driving.delete(driving))
          this.#driving.add(driving)
        }
      })
      .catch(this.onError)
      .finally(() => {
        this.#claiming = undefined
        if (this.#again) {
          this.#again = false
          this.#told()
        }
      })
  }
}
