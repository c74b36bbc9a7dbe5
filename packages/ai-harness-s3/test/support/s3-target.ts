import { CreateBucketCommand, HeadBucketCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import { inject } from 'vitest'

/** Where the tests put their objects: the local test server, or a real service from the environment. */
export interface S3Target {
  readonly bucket: string
  readonly clientConfig: S3ClientConfig
  /** True when the tests run against the local test server. */
  readonly local: boolean
}

declare module 'vitest' {
  export interface ProvidedContext {
    s3Target: { endpoint: string; bucket: string } | null
  }
}

export const LOCAL_CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' }

/** Client settings for the local server: path-style requests on 127.0.0.1, dummy credentials. */
export function localClientConfig(endpoint: string): S3ClientConfig {
  return { endpoint, region: 'us-east-1', forcePathStyle: true, credentials: LOCAL_CREDENTIALS, maxAttempts: 1 }
}

/**
 * With `S3_ENDPOINT` and `S3_BUCKET` set (and credentials in the usual AWS variables),
 * the tests use that service: AWS S3, MinIO, R2. Otherwise the local server that the
 * global setup started.
 */
export function s3Target(): S3Target {
  const endpoint = process.env.S3_ENDPOINT
  const bucket = process.env.S3_BUCKET
  if (endpoint && bucket) {
    return {
      bucket,
      local: false,
      clientConfig: {
        endpoint,
        region: process.env.S3_REGION ?? process.env.AWS_REGION ?? 'us-east-1',
        forcePathStyle: process.env.S3_FORCE_PATH_STYLE !== 'false',
        maxAttempts: 1,
      },
    }
  }
  const local = inject('s3Target')
  if (!local) throw new Error('Set both S3_ENDPOINT and S3_BUCKET, or neither (then the tests start a local S3 server).')
  return { bucket: local.bucket, local: true, clientConfig: localClientConfig(local.endpoint) }
}

/** Creates `bucket` unless it exists. */
export async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }))
  } catch {
    await client.send(new CreateBucketCommand({ Bucket: bucket }))
  }
}

export { S3Client }
