import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'

/** Every key under `prefix`, following continuation tokens. */
export async function listKeys(client: S3Client, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = []
  let token: string | undefined
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
    for (const item of page.Contents ?? []) if (item.Key) keys.push(item.Key)
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
  return keys
}

/** Every object under `prefix`, key and body, as one text: what the conformance suite searches. */
export async function dumpPrefix(client: S3Client, bucket: string, prefix: string): Promise<string> {
  const parts: string[] = []
  for (const key of await listKeys(client, bucket, prefix)) {
    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
    parts.push(`${key}\n${await object.Body?.transformToString('utf8')}\n`)
  }
  return parts.join('')
}

/** Removes every object under `prefix`. */
export async function deletePrefix(client: S3Client, bucket: string, prefix: string): Promise<void> {
  const keys = await listKeys(client, bucket, prefix)
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000).map((Key) => ({ Key }))
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: chunk, Quiet: true } }))
  }
}
