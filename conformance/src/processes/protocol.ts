/**
 * Messages between the suite and a racer (a child process or worker thread that runs a
 * store of its own). Values travel by structured clone; errors as plain objects.
 */

/** The store methods a racer runs, by path. */
export const RACER_METHODS = [
  'append',
  'read',
  'delete',
  'leases.acquire',
  'leases.renew',
  'leases.release',
  'wakeups.schedule',
  'wakeups.cancel',
  'wakeups.due',
  'wakeups.claim',
  'sessions.list',
  'sessions.waiting',
  'now',
] as const
export type RacerMethod = (typeof RACER_METHODS)[number]

export type RacerRequest =
  | { readonly id: number; readonly op: 'open'; readonly module: string; readonly namespace: string; readonly now: number }
  | {
      readonly id: number
      readonly op: 'call'
      readonly store: number
      readonly method: RacerMethod
      readonly args: unknown[]
      readonly now: number
    }
  | { readonly id: number; readonly op: 'close'; readonly store: number }
  | {
      readonly id: number
      readonly op: 'sse-resume'
      readonly store: number
      readonly runId: string
      readonly lastEventId: string
      readonly now: number
    }
  | {
      readonly id: number
      readonly op: 'lock-sections'
      readonly store: number
      readonly key: string
      readonly witness: string
      readonly who: string
      readonly sections: number
      readonly holdMs: number
      readonly now: number
    }

export interface OpenedStore {
  readonly store: number
  readonly limits: unknown
  readonly leases: boolean
  readonly wakeups: boolean
  readonly sessions: boolean
  readonly now: boolean
}

export interface SentError {
  readonly message: string
  readonly name: string
  readonly stack?: string
  /** Own enumerable properties that clone: `code`, `actualNextSeq`, … */
  readonly props: Record<string, unknown>
}

export type RacerReply = { readonly id: number; readonly value: unknown } | { readonly id: number; readonly error: SentError }

export function sendableError(error: unknown): SentError {
  if (typeof error !== 'object' || error === null) return { message: String(error), name: 'Error', props: {} }
  const props: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) props[key] = value
  }
  const e = error as Error
  return { message: String(e.message), name: String(e.name ?? 'Error'), stack: e.stack, props }
}

export function receivedError(sent: SentError, where: string): Error {
  const error = new Error(`${sent.message} (in ${where})`)
  error.name = sent.name
  Object.assign(error, sent.props)
  if (sent.stack) error.stack = `${sent.name}: ${error.message}\n--- in ${where} ---\n${sent.stack}`
  return error
}
