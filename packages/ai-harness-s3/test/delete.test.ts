import { S3Client } from '@aws-sdk/client-s3'
import { createManualClock, type LogRecord, readAll } from '@tanstack/ai-harness/store'
import { describe, expect, it } from 'vitest'
import { type S3Store, s3Store } from '../src/index.js'
import { dumpPrefix } from './support/objects.js'
import { storesOfTest } from './support/stores.js'

// Delete holds against S3's own way of deleting: tombstones on the log's next slots. What
// every store must do on delete (warm caches, fresh instances, racing writers, two deletes at
// once, fences) are the conformance cases log.delete.* and lease.after-delete.
const stores = storesOfTest('delete')
const { admin, target } = stores
const clock = createManualClock()

const open = (): S3Store => stores.open({ prefix: stores.prefix(), clock, retry: { baseMs: 5 } })

const rec = (n: number, secret = 'card-4242'): LogRecord => ({ type: 't', n, secret })
const dump = (store: S3Store) => dumpPrefix(admin, target.bucket, store.prefix)

describe('delete holds on S3', () => {
  it('a writer that always wins the slot the delete tries first cannot starve it', async () => {
    const writer = open()
    await writer.append('s', 1, [rec(1)])
    let next = 2
    // The deleter's client: just before each tombstone lands on the writer's next slot, the
    // writer appends there, as a writer appending back to back does.
    const client = new S3Client(target.clientConfig)
    client.middlewareStack.add(
      (run) => async (args) => {
        const input = args.input as { Key?: string; IfNoneMatch?: string; Body?: unknown }
        if (input.IfNoneMatch === '*' && input.Body === '' && Number(input.Key?.split('/').at(-1)) === next) {
          next = (await writer.append('s', next, [rec(next, 'race')])).nextSeq
        }
        return run(args)
      },
      { step: 'initialize' },
    )
    const deleter = s3Store({ bucket: target.bucket, prefix: writer.prefix, client })
    try {
      await deleter.delete('s')
    } finally {
      client.destroy()
    }
    expect(next).toBeGreaterThan(2) // the writer did win the first slots
    expect(await writer.append('s', next, [rec(next, 'race')]).catch((e: { code?: string }) => e.code)).toBe('LOG_CONFLICT')
    expect(await readAll(writer, 's')).toEqual([])
    expect(await dump(writer)).not.toContain('race')
  })
})
