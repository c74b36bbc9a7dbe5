/**
 * The S3 store of the conformance run's racer processes (`processes`): each racer opens
 * its stores here, with a client of its own, on the bucket and prefix conformance-processes.test.ts hands
 * down in `HARNESS_TEST_S3_TARGET` (the local server's port is known only once the tests start).
 */
import type { StoreContext } from '@tanstack/ai-harness-conformance'
import type { S3ClientConfig } from '@aws-sdk/client-s3'
import { s3Store } from '../../src/index.js'

export const TARGET_ENV = 'HARNESS_TEST_S3_TARGET'

export interface RacerTarget {
  readonly bucket: string
  readonly clientConfig: S3ClientConfig
  /** The conformance run's key prefix of a namespace is this, then the namespace, then `/`. */
  readonly prefixBase: string
}

export function createStore({ namespace, clock }: StoreContext) {
  const target = JSON.parse(process.env[TARGET_ENV] ?? 'null') as RacerTarget | null
  if (!target) throw new Error(`${TARGET_ENV} is not set: conformance-processes.test.ts sets it before its racers start.`)
  return s3Store({
    bucket: target.bucket,
    prefix: `${target.prefixBase}${namespace}/`,
    clock,
    retry: { baseMs: 5 },
    clientConfig: target.clientConfig,
  })
}
