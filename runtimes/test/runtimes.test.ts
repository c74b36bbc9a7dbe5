/**
 * The seed's checkout flow (two steps, a crash between them, the resume by a second host)
 * under Bun, Deno and workerd, on the memory store and over HTTP on DynamoDB (dynalite) and
 * S3 (the S3 package's test server), both on loopback. Each runtime is the binary its npm package ships, pinned in package.json.
 * A runtime that cannot run on this machine is skipped with its reason, except under CI,
 * where the same case fails: CI never passes on a runtime it did not run.
 */
import type { AddressInfo } from 'node:net'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3'
import { createHarnessTable } from '@tanstack/ai-harness-dynamodb'
import dynalite from 'dynalite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startS3TestServer } from '../../packages/ai-harness-s3/test/server/s3-test-server.js'
import type { FlowConfig } from '../src/stores.js'
import { reportOf, runChild } from './run-child.js'
import { RUNTIMES } from './runtimes.js'

/** Time limit of one run of one runtime (start included); a run takes well under a second here. */
const RUN_LIMIT_MS = 30_000
const TABLE = 'ai-harness-runtimes'
const BUCKET = 'ai-harness-runtimes'
const LOCAL = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 }
const inCi = process.env.CI === 'true' || process.env.CI === '1'

let endpoint = ''
let s3Endpoint = ''
let stopDynalite = async () => {}
let stopS3 = async () => {}
const timings: string[] = []

beforeAll(async () => {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  stopDynalite = () => new Promise<void>((resolve) => server.close(() => resolve()))
  const client = new DynamoDBClient({ endpoint, ...LOCAL })
  try {
    await createHarnessTable(client, { tableName: TABLE })
  } finally {
    client.destroy()
  }
  // The S3 package's own test server: in memory, on loopback.
  const s3 = await startS3TestServer()
  s3Endpoint = s3.endpoint
  stopS3 = () => s3.close()
  const s3Client = new S3Client({ endpoint: s3Endpoint, forcePathStyle: true, ...LOCAL })
  try {
    await s3Client.send(new CreateBucketCommand({ Bucket: BUCKET }))
  } finally {
    s3Client.destroy()
  }
})

afterAll(async () => {
  await Promise.all([stopDynalite(), stopS3()])
  if (timings.length > 0) console.log(`runtimes, wall time of each run (process start included):\n  ${timings.join('\n  ')}`)
})

/**
 * Where a store cannot run on a runtime for a reason outside these packages, the case pins
 * that reason instead: when it goes away, the case fails and the runtimes page must change.
 */
const KNOWN_LIMITS: Record<string, { why: string; error: RegExp }> = {
  'workerd s3': {
    why: "the AWS SDK's fetch build of the S3 client parses XML with DOMParser, which workerd lacks",
    error: /DOMParser is not defined/,
  },
}

const configs = (runtime: string): Array<{ label: string; store: FlowConfig['store']; config: () => FlowConfig }> => [
  { label: 'the memory store', store: 'memory', config: () => ({ store: 'memory' }) },
  {
    label: 'DynamoDB (dynalite on loopback)',
    store: 'dynamodb',
    config: () => ({ store: 'dynamodb', endpoint, tableName: TABLE, namespace: `${runtime}-${crypto.randomUUID()}` }),
  },
  {
    label: 'S3 (the S3 test server on loopback)',
    store: 's3',
    config: () => ({ store: 's3', endpoint: s3Endpoint, bucket: BUCKET, prefix: `${runtime}-${crypto.randomUUID()}` }),
  },
]

for (const runtime of RUNTIMES) {
  const availability = runtime.version()
  const skip = !availability.ok && !inCi
  const title = availability.ok
    ? `${runtime.name} ${availability.version}`
    : `${runtime.name} (skipped: ${availability.why}; CI fails here instead)`

  describe.skipIf(skip)(title, () => {
    it(`is the pinned version (${runtime.pinned})`, () => {
      if (!availability.ok) throw new Error(`${availability.why}. CI refuses to skip a runtime: install it (pnpm install) or fix it.`)
      expect(availability.version).toBe(runtime.pinned)
    })

    for (const { label, store, config } of configs(runtime.name)) {
      const limit = KNOWN_LIMITS[`${runtime.name} ${store}`]
      if (limit) {
        it(`checkout on ${label} fails, a known limit: ${limit.why}`, async () => {
          if (!availability.ok) throw new Error(`${availability.why}. CI refuses to skip a runtime.`)
          const bundle = await runtime.prepare()
          const run = runChild(runtime.command, runtime.args(config(), bundle), { cwd: process.cwd(), timeoutMs: RUN_LIMIT_MS })
          await expect(run).rejects.toThrow(limit.error)
        })
        continue
      }
      it(`checkout on ${label}: a crash right after the charge step, resumed by another host: one charge, one invoice`, async () => {
        if (!availability.ok) throw new Error(`${availability.why}. CI refuses to skip a runtime.`)
        const bundle = await runtime.prepare()
        const run = await runChild(runtime.command, runtime.args(config(), bundle), { cwd: process.cwd(), timeoutMs: RUN_LIMIT_MS })
        const { ms, ...report } = reportOf(run.stdout)
        timings.push(`${runtime.name} on ${label}: ${run.ms} ms (the flow itself ${String(ms)} ms)`)
        expect(report).toEqual({
          charges: 1,
          chargeCalls: 1,
          invoices: 1,
          chargesAtCrash: 1,
          needsRecovery: true,
          results: [{ chargeId: 'ch_o1' }],
          http: { code: 200, status: 'idle' },
        })
      })
    }
  })
}
