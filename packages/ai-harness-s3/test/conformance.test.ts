import { S3Client } from '@aws-sdk/client-s3'
import { runConformance } from '@tanstack/ai-harness-conformance'
import { afterAll } from 'vitest'
import { s3Store } from '../src/index.js'
import { failAppendWrites } from './support/fault-hook.js'
import { s3NamespaceData } from './support/namespace-data.js'
import { s3Target } from './support/s3-target.js'

// Each namespace is a key prefix; every createStore call is another process with its own client.
const target = s3Target()
const admin = new S3Client(target.clientConfig)
const prefixOf = (namespace: string) => `conformance/${namespace}/`
// The faulty stores' clients: a store does not destroy a client it was given.
const faultyClients: S3Client[] = []
afterAll(() => {
  admin.destroy()
  for (const client of faultyClients) client.destroy()
})

runConformance({
  name: target.local ? 's3 (local test server)' : 's3',
  createStore: ({ namespace, clock }) =>
    s3Store({ bucket: target.bucket, prefix: prefixOf(namespace), clock, clientConfig: target.clientConfig, retry: { baseMs: 5 } }),
  ...s3NamespaceData(admin, target.bucket, prefixOf),
  faults: {
    createStore: (context) => {
      const client = new S3Client({ maxAttempts: 1, ...target.clientConfig })
      faultyClients.push(client)
      failAppendWrites(client, context)
      return s3Store({ bucket: target.bucket, prefix: prefixOf(context.namespace), clock: context.clock, client, retry: context.retry })
    },
  },
  skip: {
    fencing: 'an append is one conditional PUT of the batch object; S3 cannot also check the lease object in the same write',
    orphans: 'S3 has no signal that a holder died (no connection, no session): leases end by expiry (10 s by default) or release',
  },
})
