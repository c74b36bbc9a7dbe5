import { S3Client } from '@aws-sdk/client-s3'
import { runConformance } from '@tanstack/ai-harness-conformance'
import { afterAll } from 'vitest'
import { s3Store } from '../src/index.js'
import { s3NamespaceData } from './support/namespace-data.js'
import { type RacerTarget, TARGET_ENV } from './support/racer-store-factory.js'
import { s3Target } from './support/s3-target.js'

// The stream and lock cases whose other side runs in other processes: the resume of
// stream.sse.resume and the lock holders of lock.exclusive are child processes, each with its
// own client. (The whole suite runs in conformance.test.ts, in this process.)
const target = s3Target()
const admin = new S3Client(target.clientConfig)
afterAll(() => admin.destroy())
const prefixBase = 'conformance-processes/'
const prefixOf = (namespace: string) => `${prefixBase}${namespace}/`
// The racer processes (forked with this environment) open their stores on the same bucket and prefixes.
process.env[TARGET_ENV] = JSON.stringify({ bucket: target.bucket, clientConfig: target.clientConfig, prefixBase } satisfies RacerTarget)

runConformance({
  name: target.local ? 's3 across processes (local test server)' : 's3 across processes',
  createStore: ({ namespace, clock }) =>
    s3Store({ bucket: target.bucket, prefix: prefixOf(namespace), clock, retry: { baseMs: 5 }, clientConfig: target.clientConfig }),
  ...s3NamespaceData(admin, target.bucket, prefixOf),
  processes: { module: new URL('./support/racer-store-factory.ts', import.meta.url) },
  cases: ['stream.sse.resume', 'lock.exclusive'],
})
