import type { HarnessStore } from '@tanstack/ai-harness'
import type { MemoryData } from '@tanstack/ai-harness-memory'
import { CliError, ExitCode, messageOf } from '../exit-codes.js'
import { describeStore, type StoreConfig } from './store-config.js'

/** An open store and how to let go of it. */
export interface OpenedStore {
  readonly store: HarnessStore
  readonly config: StoreConfig
  close(): Promise<void>
}

export interface OpenStoreOptions {
  /** For `memory`: the data to share between store instances in this process. */
  memoryData?: MemoryData
}

/**
 * Opens the configured store, ready to use: tables migrated or created, and one
 * round trip made, so an unreachable store fails here with exit code 3 instead of in
 * the middle of a turn. Each store's packages are imported only when chosen: the AWS
 * SDKs alone would add most of a second to every process start.
 */
export async function openStore(config: StoreConfig, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  try {
    return await open(config, options)
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(ExitCode.StoreUnreachable, `Cannot open the store (${describeStore(config)}): ${messageOf(error)}`, { cause: error })
  }
}

async function open(config: StoreConfig, options: OpenStoreOptions): Promise<OpenedStore> {
  switch (config.kind) {
    case 'memory': {
      const { createMemoryData, memoryStore } = await import('@tanstack/ai-harness-memory')
      const store = memoryStore({ data: options.memoryData ?? createMemoryData() })
      return { store, config, close: async () => {} }
    }
    case 'pglite': {
      const [{ PGlite }, { postgresStore }] = await Promise.all([import('@electric-sql/pglite'), import('@tanstack/ai-harness-postgres')])
      const db = new PGlite(config.path)
      const store = postgresStore({ client: db, closeClient: true })
      await closeOnFailure(store.migrate(), () => store.close())
      return { store, config, close: () => store.close() }
    }
    case 'postgres': {
      const [{ default: pg }, { postgresStore }] = await Promise.all([import('pg'), import('@tanstack/ai-harness-postgres')])
      const pool = new pg.Pool({ connectionString: config.databaseUrl, connectionTimeoutMillis: 5_000, max: 4 })
      // Without a listener, an idle connection that drops takes the process down.
      pool.on('error', () => {})
      const store = postgresStore({ client: pool, schema: config.schema, closeClient: true })
      await closeOnFailure(store.migrate(), () => store.close())
      return { store, config, close: () => store.close() }
    }
    case 'dynamodb': {
      quietAwsNodeNotice()
      const { createHarnessTable, dynamoDbStore } = await import('@tanstack/ai-harness-dynamodb')
      const store = dynamoDbStore({
        tableName: config.tableName,
        namespace: config.namespace,
        clientConfig: { region: config.region, ...(config.endpoint ? { endpoint: config.endpoint, credentials: localCredentials() } : {}) },
      })
      await closeOnFailure(createHarnessTable(store.client, { tableName: config.tableName }), () => store.close())
      return { store, config, close: () => store.close() }
    }
    case 's3': {
      quietAwsNodeNotice()
      const { s3Store } = await import('@tanstack/ai-harness-s3')
      const store = s3Store({
        bucket: config.bucket,
        prefix: config.prefix,
        clientConfig: {
          region: config.region,
          ...(config.endpoint ? { endpoint: config.endpoint, forcePathStyle: true, credentials: localCredentials() } : {}),
        },
      })
      // The store never creates buckets; one read proves the endpoint answers and the bucket exists.
      await closeOnFailure(store.read('checkout-probe', { limit: 1 }), () => store.close())
      return { store, config, close: () => store.close() }
    }
  }
}

/**
 * The AWS SDK warns on Node 20 that its releases after January 2027 will need Node 22;
 * the pinned SDK runs fine here, and the notice would bury the story on stderr. A user
 * who set the variable keeps their choice.
 */
function quietAwsNodeNotice(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
}

/** Local emulators take any key; the SDK still wants one. Real credentials from the environment win. */
function localCredentials() {
  return {
    accessKeyId: process.env.AWS_ACCESS_KEY_ID || 'local',
    secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY || 'local',
    ...(process.env.AWS_SESSION_TOKEN ? { sessionToken: process.env.AWS_SESSION_TOKEN } : {}),
  }
}

async function closeOnFailure<T>(work: Promise<T>, close: () => Promise<void>): Promise<T> {
  try {
    return await work
  } catch (error) {
    await close().catch(() => {})
    throw error
  }
}
