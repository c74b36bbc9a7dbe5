import type { NamespaceData } from '@tanstack/ai-harness-conformance'
import { type PostgresClient, postgresStore } from '../src/index.js'
import { schemaFor } from './support.js'

/** A namespace is a schema (`schemaFor`): its dump is the store's `dump()`, its cleanup drops the schema. */
export function pgNamespaceData(client: PostgresClient): NamespaceData {
  return {
    dump: ({ namespace }) => postgresStore({ client, schema: schemaFor(namespace) }).dump(),
    cleanup: async ({ namespace }) => void (await client.query(`DROP SCHEMA IF EXISTS "${schemaFor(namespace)}" CASCADE`)),
  }
}
