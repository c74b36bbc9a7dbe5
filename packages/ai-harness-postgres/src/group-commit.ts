/**
 * Group commit: the appends of concurrent sessions on one store instance that arrive while
 * its round trips are in flight go out together in the next one, one statement for many
 * sessions (`appendBatch` in `sql.ts`), each with its own checks and outcome.
 *
 * No timer: an append is sent at once when fewer than `maxInFlight` round trips are under
 * way (a lone session makes one round trip per step, with no wait), and otherwise waits
 * only for one of them to end. What is queued then goes out as one group.
 */
import type { Lease } from '@tanstack/ai-harness/store'

/** One append, checked and turned into record texts, waiting for its round trip. */
export interface QueuedAppend {
  readonly logId: string
  readonly expectedSeq: number
  readonly json: readonly string[]
  /** UTF-8 bytes of `json`, to cap a group's size. */
  readonly bytes: number
  readonly lease: Lease | undefined
}

export interface GroupCommitOptions {
  /** Round trips of appends under way at once; more appends wait and go out together. */
  readonly maxInFlight: number
  /** At most this many appends in one group. */
  readonly maxAppends: number
  /** At most this many record bytes in one group (an append larger than that goes alone). */
  readonly maxBytes: number
  /** One append alone; rejects with the append's own error. */
  one(append: QueuedAppend): Promise<void>
  /**
   * Appends of distinct logs in one round trip: each one's error, or undefined when it
   * landed. Rejects when the round trip itself failed: then every append in it is unknown
   * (each may have landed), and each gets that error.
   */
  many(appends: readonly QueuedAppend[]): Promise<readonly (unknown | undefined)[]>
}

interface Waiting {
  readonly append: QueuedAppend
  resolve(): void
  reject(error: unknown): void
}

/** A function that sends an append with the others queued at the same time. */
export type Committer = (append: QueuedAppend) => Promise<void>

export function groupCommit(options: GroupCommitOptions): Committer {
  const { maxInFlight, maxAppends, maxBytes } = options
  let inFlight = 0
  let queue: Waiting[] = []

  /**
   * The next group: the oldest append, then the next ones of other logs, up to the caps.
   * Two appends of one log never share a group (the second would conflict with the first
   * inside one statement); the later one keeps its place for the next group.
   */
  function take(): Waiting[] {
    if (queue.length === 1 || maxAppends === 1) return queue.splice(0, 1)
    const group: Waiting[] = []
    const rest: Waiting[] = []
    const logs = new Set<string>()
    let bytes = 0
    for (const waiting of queue) {
      const { logId, bytes: size } = waiting.append
      const fits = group.length === 0 || (group.length < maxAppends && bytes + size <= maxBytes && !logs.has(logId))
      if (fits) {
        group.push(waiting)
        logs.add(logId)
        bytes += size
      } else {
        rest.push(waiting)
      }
    }
    queue = rest
    return group
  }

  function send(group: Waiting[]): Promise<void> {
    if (group.length === 1) {
      const [only] = group as [Waiting]
      return options.one(only.append).then(only.resolve, only.reject)
    }
    return options.many(group.map((waiting) => waiting.append)).then(
      (outcomes) => {
        group.forEach((waiting, i) => {
          const error = outcomes[i]
          if (error === undefined) waiting.resolve()
          else waiting.reject(error)
        })
      },
      (error: unknown) => {
        for (const waiting of group) waiting.reject(error)
      },
    )
  }

  function pump(): void {
    while (inFlight < maxInFlight && queue.length > 0) {
      inFlight++
      send(take()).then(ended, ended)
    }
  }

  function ended(): void {
    inFlight--
    pump()
  }

  return (append) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ append, resolve, reject })
      pump()
    })
}
