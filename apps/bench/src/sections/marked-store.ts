import type { HarnessStore } from '@tanstack/ai-harness'

/** Calls of each kind that get marks (a running worker polls for a lease's length before its resume). */
const MARKED_CALLS = 200
/** The store calls on a takeover's way (not `watch`, which resolves only when it stops). */
const MARKED = new Set([
  'read',
  'append',
  'leases.acquire',
  'leases.renew',
  'leases.orphans',
  'wakeups.claim',
  'wakeups.schedule',
  'wakeups.cancel',
  'sessions.waiting',
])

/**
 * The store with its takeover path marked: each of the first calls of the methods in
 * `MARKED` marks its start and end (`leases.orphans#2 end 1`: the second look, which
 * found one session).
 */
export function markedStore(store: HarnessStore, mark: (phase: string) => void): HarnessStore {
  const calls = new Map<string, number>()
  const wrap =
    <A extends unknown[], R>(name: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const n = (calls.get(name) ?? 0) + 1
      calls.set(name, n)
      if (n > MARKED_CALLS) return fn(...args)
      mark(`${name}#${n} start`)
      const result = await fn(...args)
      mark(`${name}#${n} end${Array.isArray(result) ? ` ${result.length}` : ''}`)
      return result
    }
  const over = <T extends object>(target: T, prefix: string): T =>
    new Proxy(target, {
      get(t, key, receiver) {
        const value = Reflect.get(t, key, receiver) as unknown
        return typeof key === 'string' && MARKED.has(`${prefix}${key}`) && typeof value === 'function'
          ? wrap(`${prefix}${key}`, (value as (...a: unknown[]) => Promise<unknown>).bind(t))
          : value
      },
    })
  const parts = {
    leases: store.leases && over(store.leases, 'leases.'),
    wakeups: store.wakeups && over(store.wakeups, 'wakeups.'),
    sessions: store.sessions && over(store.sessions, 'sessions.'),
  }
  return new Proxy(over(store, ''), {
    get(t, key, receiver) {
      return key === 'leases' || key === 'wakeups' || key === 'sessions' ? parts[key] : Reflect.get(t, key, receiver)
    },
  })
}
