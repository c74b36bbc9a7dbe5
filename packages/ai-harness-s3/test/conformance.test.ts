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
  createStore: ({ namespace, clock, retry, faults }) => {
    const options = { bucket: target.bucket, prefix: prefixOf(namespace), clock, retry: retry ?? { baseMs: 5 } }
    if (!faults) return s3Store({ ...options, clientConfig: target.clientConfig })
    // In the suite's retry cases: the same store on a client (of the same config, without the
    // SDK's own retries) whose writes of an append fail on cue.
    const client = new S3Client({ maxAttempts: 1, ...target.clientConfig })
    faultyClients.push(client)
    failAppendWrites(client, { namespace, clock, retry: retry ?? {}, ...faults })
    return s3Store({ ...options, client })
  },
  ...s3NamespaceData(admin, target.bucket, prefixOf),
  faults: true,
  skip: {
    fencing: 'an append is one conditional PUT of the batch object; S3 cannot also check the lease object in the same write',
    orphans: 'S3 has no signal that a holder died (no connection, no session): leases end by expiry (10 s by default) or release',
    watch: 'S3 cannot notify other processes: a worker finds a wakeup made due at its next poll (1 s by default)',
  },
})
