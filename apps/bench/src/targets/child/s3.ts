import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import type { LogRecord } from '@tanstack/ai-harness/store'
import { keyLayout, s3Store } from '@tanstack/ai-harness-s3'
import { s3ClientConfig } from '../aws-config.js'
import { countAwsRequests } from '../aws-count.js'
import type { ChildAccess } from './access.js'
import { RequestCounter } from '../requests.js'
import type { ChildConnection } from '../target.js'

/** Batch objects fetched at once, as the store's default `readConcurrency`. */
const IN_FLIGHT = 8

export function s3Access(connection: Extract<ChildConnection, { store: 's3' }>): ChildAccess {
  const requests = new RequestCounter()
  const client = new S3Client(s3ClientConfig(connection.endpoint))
  countAwsRequests(client, requests)
  const { bucket, prefix } = connection
  return {
    requests,
    createStore: () => s3Store({ bucket, prefix, client }),
    // List the log's batch objects, get them (8 at a time), parse each body's records.
    async bareRead(logId) {
      const keys: string[] = []
      let token: string | undefined
      do {
        const out = await client.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: keyLayout(prefix).logPrefix(logId), ContinuationToken: token }),
        )
        keys.push(...(out.Contents ?? []).map((o) => o.Key!))
        token = out.NextContinuationToken
      } while (token)
      const bodies: string[] = new Array(keys.length)
      for (let i = 0; i < keys.length; i += IN_FLIGHT) {
        await Promise.all(
          keys.slice(i, i + IN_FLIGHT).map(async (Key, j) => {
            const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key }))
            bodies[i + j] = await out.Body!.transformToString()
          }),
        )
      }
      return bodies.flatMap((body) => (JSON.parse(body) as { records: LogRecord[] }).records)
    },
    close: async () => client.destroy(),
  }
}
