import type { S3Client } from '@aws-sdk/client-s3'
import type { NamespaceData } from '@tanstack/ai-harness-conformance'
import { deletePrefix, dumpPrefix } from './objects.js'

/**
 * A namespace is a key prefix (`prefixOf(namespace)`, the namespace itself by default): its
 * dump is every object under it, its cleanup deletes them.
 */
export function s3NamespaceData(client: S3Client, bucket: string, prefixOf = (namespace: string) => namespace): NamespaceData {
  return {
    dump: ({ namespace }) => dumpPrefix(client, bucket, prefixOf(namespace)),
    cleanup: ({ namespace }) => deletePrefix(client, bucket, prefixOf(namespace)),
  }
}
