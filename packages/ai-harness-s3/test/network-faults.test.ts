import { createManualClock } from '@tanstack/ai-harness/testing'
import { type FaultProxy, networkFaultScenarios, startFaultProxy } from '@tanstack/ai-harness/testing/node'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { type S3Store, s3Store } from '../src/index.js'
import { type S3TestServer, startS3TestServer } from './server/s3-test-server.js'
import { ensureBucket, localClientConfig, S3Client } from './support/s3-target.js'

// The runtime against the S3 test server through a TCP proxy that cuts, resets and
// blackholes connections (the shared network fault scenarios). The SDK has no request
// timeout here: the runtime's deadlines must end every wait.
const bucket = 'network-faults'
let server: S3TestServer
let proxy: FaultProxy
const clock = createManualClock()
const stores: S3Store[] = []

beforeAll(async () => {
  server = await startS3TestServer()
  const admin = new S3Client(localClientConfig(server.endpoint))
  await ensureBucket(admin, bucket)
  admin.destroy()
  const url = new URL(server.endpoint)
  proxy = await startFaultProxy({ target: { host: url.hostname, port: Number(url.port) } })
})
afterAll(async () => {
  await proxy.close()
  await Promise.all(stores.map((s) => s.close().catch(() => {})))
  await server.close()
})

function storeAt(endpoint: string) {
  const store = s3Store({ bucket, prefix: 'net/', clock, clientConfig: localClientConfig(endpoint), retry: { baseMs: 5, maxMs: 50 } })
  stores.push(store)
  return store
}

describe('the runtime on S3 through a faulty network', () => {
  for (const scenario of networkFaultScenarios) {
    it(scenario.name, () =>
      scenario.run({
        proxy,
        clock,
        openStore: async () => storeAt(`http://${proxy.address}`),
        openDirectStore: async () => storeAt(server.endpoint),
      }),
    )
  }
})
