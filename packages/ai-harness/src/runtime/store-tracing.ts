import type { HarnessStore } from '../contract/types.js'
import type { SecretScanner } from '../secrets/secret-scanner.js'
import { ATTR, type Attributes, type HarnessSpan, startSpan } from './tracing.js'

/**
 * The store as one session uses it, with a client span per `append` (its log, expected
 * seq and record count) and per `read` (its log, `after`, `limit` and the entries it
 * returned). Everything else passes through untouched.
 */
export function traceStore(store: HarnessStore, session: { hostId: string; scanner: SecretScanner }): HarnessStore {
  const { hostId, scanner } = session
  const traced = <T>(name: string, attributes: () => Attributes, call: () => Promise<T>, after: (result: T) => Attributes): Promise<T> => {
    const started = startSpan(name, () => ({ ...attributes(), [ATTR.hostId]: hostId }), { scanner, kind: 'client' })
    // A span nobody records has nothing to note: the call runs as it is (once per step).
    if (!(started instanceof Promise) && !started.records) {
      try {
        return started.run(call)
      } catch (error) {
        return Promise.reject(error)
      }
    }
    return inClientSpan(started, call, after)
  }
  const append: HarnessStore['append'] = (logId, expectedSeq, records, options) =>
    traced(
      'harness.store.append',
      () => ({ [ATTR.sessionId]: logId, [ATTR.seq]: expectedSeq, [ATTR.records]: records.length }),
      () => (options === undefined ? store.append(logId, expectedSeq, records) : store.append(logId, expectedSeq, records, options)),
      () => ({}),
    )
  const read: HarnessStore['read'] = (logId, options) =>
    traced(
      'harness.store.read',
      () => ({ [ATTR.sessionId]: logId, [ATTR.seq]: options?.after ?? 0, [ATTR.limit]: options?.limit }),
      () => (options === undefined ? store.read(logId) : store.read(logId, options)),
      (entries) => ({ [ATTR.records]: entries.length }),
    )
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append
      if (property === 'read') return read
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** Runs a store call in its client span: the call's outcome on the span, then its end. */
async function inClientSpan<T>(
  started: HarnessSpan | Promise<HarnessSpan>,
  call: () => Promise<T>,
  after: (result: T) => Attributes,
): Promise<T> {
  const span = await started
  try {
    const result = await span.run(call)
    span.set(after(result))
    return result
  } catch (error) {
    span.fail(error)
    throw error
  } finally {
    span.end()
  }
}
