import { randomUUID } from 'node:crypto'
import { S3Client } from '@aws-sdk/client-s3'
import { afterAll, afterEach } from 'vitest'
import { type S3Store, type S3StoreOptions, s3Store } from '../../src/index.js'
import { s3NamespaceData } from './namespace-data.js'
import { s3Target } from './s3-target.js'

/**
 * The stores of one test file: each `open` is another instance (its own client and caches,
 * like another process), closed after each test, its prefix's objects deleted.
 */
export function storesOfTest(label: string) {
  const target = s3Target()
  const admin = new S3Client(target.clientConfig)
  const data = s3NamespaceData(admin, target.bucket)
  const stores: S3Store[] = []
  const prefixes = new Set<string>()
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close()
    for (const prefix of prefixes) await data.cleanup({ namespace: prefix })
    prefixes.clear()
  })
  afterAll(() => admin.destroy())
  return {
    target,
    admin,
    /** A fresh prefix, emptied after the test. */
    prefix() {
      const prefix = `${label}-${randomUUID()}/`
      prefixes.add(prefix)
      return prefix
    },
    /** Another instance on `options.prefix` (a fresh one when left out). */
    open(options: Partial<S3StoreOptions> = {}): S3Store {
      const prefix = options.prefix ?? this.prefix()
      prefixes.add(prefix)
      const store = s3Store({ bucket: target.bucket, clientConfig: target.clientConfig, ...options, prefix })
      stores.push(store)
      return store
    },
  }
}
