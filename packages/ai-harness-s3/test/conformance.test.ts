import { S3Client } from '@aws-sdk/client-s3'
import { runConformance } from '@tanstack/ai-harness-conformance'
import { afterAll } from 'vitest'
import { s3Store } from '../src/index.js'
import { deletePrefix, dumpPrefix } from './support/objects.js'
import { s3Target } from './support/s3-target.js'

// Each namespace is a key prefix; every createStore call is another process with its own client.
const target = s3Target()
const admin = new S3Client(target.clientConfig)
const prefixOf = (namespace: string) => `conformance/${namespace}/`
afterAll(() => admin.destroy())

runConformance({
  name: target.local ? 's3 (local test server)' : 's3',
  createStore: ({ namespace, clock }) =>
    s3Store({ bucket: target.bucket, prefix: prefixOf(namespace), clock, clientConfig: target.clientConfig, retry: { baseMs: 5 } }),
  dump: ({ namespace }) => dumpPrefix(admin, target.bucket, prefixOf(namespace)),
  cleanup: ({ namespace }) => deletePrefix(admin, target.bucket, prefixOf(namespace)),
  skip: { fencing: 'an append is one conditional PUT of the batch object; S3 cannot also check the lease object in the same write' },
})
