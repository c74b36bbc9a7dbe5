import { S3Client } from '@aws-sdk/client-s3'
import type { TestProject } from 'vitest/node'
import { startS3TestServer } from '../server/s3-test-server.js'
import { ensureBucket, localClientConfig } from './s3-target.js'

const BUCKET = 'harness-test'

/** Starts the S3 test server for the package's tests, unless a real endpoint is configured. */
export default async function setup(project: TestProject) {
  if (process.env.S3_ENDPOINT) {
    project.provide('s3Target', null)
    return
  }
  const server = await startS3TestServer()
  const client = new S3Client(localClientConfig(server.endpoint))
  await ensureBucket(client, BUCKET)
  client.destroy()
  project.provide('s3Target', { endpoint: server.endpoint, bucket: BUCKET })
  return () => server.close()
}
