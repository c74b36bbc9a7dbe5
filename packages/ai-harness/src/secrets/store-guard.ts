import { HarnessError } from '../contract/errors.js'
import type { HarnessStore, LogRecord } from '../contract/types.js'
import type { SecretScanner } from './secret-scanner.js'

/**
 * The last check before any byte of a session reaches its store. Every scan point of
 * the runtime has cut or refused secrets already; a batch that still holds one (an id
 * the model made up from a secret, a scan point someone forgot) is refused here with
 * nothing written, so a gap upstream fails loudly instead of leaking.
 */
export function guardAppends(store: HarnessStore, scanner: SecretScanner): HarnessStore {
  const append: HarnessStore['append'] = (logId, expectedSeq, records, options) => {
    if (scanner.size > 0) assertNoSecret(scanner, records)
    return options === undefined ? store.append(logId, expectedSeq, records) : store.append(logId, expectedSeq, records, options)
  }
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

function assertNoSecret(scanner: SecretScanner, records: readonly LogRecord[]): void {
  if (scanner.scanValue(records) === null) return
  records.forEach((record, index) => {
    const found = scanner.find(record, `records[${index}]`)
    if (!found) return
    const type = typeof record.type === 'string' && scanner.scanText(record.type) === null ? record.type : 'a record'
    throw new HarnessError(
      'RECORD_SECRET',
      `The harness refused to log ${JSON.stringify(type)}: ${found.path} holds a secret of the session (${found.encoding}). Nothing was written. This happens when the model makes an id or a name up from a secret; the turn stops so the log never keeps it.`,
    )
  })
}
