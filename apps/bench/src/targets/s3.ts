import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import { s3Store } from '@tanstack/ai-harness-s3'
import { s3ClientConfig } from './aws-config.js'
import { countAwsRequests } from './aws-count.js'
import { RequestCounter } from './requests.js'
import { startS3TestServer } from './s3-test-server.js'
import type { Target } from './target.js'

/**
 * The store on the S3 test server of its package (conditional writes enforced as AWS
 * does), in this process, with a bucket of its own for this run. The baseline is a
 * PutObject with `If-None-Match: *` of the same bytes.
 */
export async function s3Target(runId: string): Promise<Target> {
  const server = await startS3TestServer()
  const requests = new RequestCounter()
  const client = new S3Client(s3ClientConfig(server.endpoint))
  countAwsRequests(client, requests)
  const bucket = `bench-${runId}`
  const prefix = `bench-${runId}/`
  await client.send(new CreateBucketCommand({ Bucket: bucket }))
  return {
    name: 's3',
    requests,
    createStore: () => s3Store({ bucket, prefix, client }),
    async bareWrite(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}bare/${key}`, Body: bytes, IfNoneMatch: '*' }))
    },
    childConnection: () => ({ store: 's3', endpoint: server.endpoint, bucket, prefix }),
    async close() {
      try {
        await emptyBucket(client, bucket)
        await client.send(new DeleteBucketCommand({ Bucket: bucket }))
      } finally {
        client.destroy()
        await server.close()
      }
    },
  }
}

/** Deletes every object of this run's bucket, 1000 keys per request. */
async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }))
    const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key! }))
    if (keys.length === 0) return
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }))
  }
}
