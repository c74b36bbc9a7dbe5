import type { HarnessStore } from '../contract/types.js'

/**
 * The same store with appends that ignore the writer's lease, as DynamoDB's and S3's do:
 * only the seq guards the log. For tests of what the runtime itself must keep apart when
 * no fence refuses a superseded writer.
 */
export function unfencedAppends<S extends HarnessStore>(store: S): S {
  return { ...store, append: (logId, seq, records) => store.append(logId, seq, records) }
}
