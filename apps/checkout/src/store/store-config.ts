import { join, resolve } from 'node:path'
import { usageError } from '../exit-codes.js'

/** The stores the CLI can run on. */
export const STORE_KINDS = ['pglite', 'memory', 'postgres', 'dynamodb', 's3'] as const
export type StoreKind = (typeof STORE_KINDS)[number]

/**
 * Where the session log lives: plain JSON, so the parent can hand it to the child
 * processes it starts.
 */
export type StoreConfig =
  | { kind: 'memory' }
  | { kind: 'pglite'; path: string }
  | { kind: 'postgres'; databaseUrl: string | undefined; schema: string }
  | { kind: 'dynamodb'; endpoint: string | undefined; region: string; tableName: string; namespace: string }
  | { kind: 's3'; endpoint: string | undefined; region: string; bucket: string; prefix: string }

/** The store flags as commander parsed them (env fallbacks applied by commander). */
export interface StoreFlags {
  store: StoreKind
  dataDir: string
  databaseUrl?: string
  pgSchema: string
  endpoint?: string
  region?: string
  table: string
  bucket?: string
  prefix: string
}

/** The folder of the embedded PGlite database inside the data folder. */
export const pglitePath = (dataDir: string) => join(resolve(dataDir), 'pglite')

/** Checks the flags of the chosen store and returns its config; a missing setting is a usage error. */
export function storeConfigFrom(flags: StoreFlags, env: NodeJS.ProcessEnv): StoreConfig {
  switch (flags.store) {
    case 'memory':
      return { kind: 'memory' }
    case 'pglite':
      return { kind: 'pglite', path: pglitePath(flags.dataDir) }
    case 'postgres':
      // Without a URL, node-postgres reads PGHOST, PGPORT, PGUSER, PGPASSWORD and PGDATABASE itself.
      return { kind: 'postgres', databaseUrl: flags.databaseUrl || undefined, schema: flags.pgSchema }
    case 'dynamodb': {
      const endpoint = flags.endpoint ?? (env.DYNAMODB_ENDPOINT || env.AWS_ENDPOINT_URL || undefined)
      const region = flags.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined)
      if (!endpoint && !region) {
        throw usageError(
          '--store dynamodb needs an endpoint: pass --endpoint http://127.0.0.1:8000 (DynamoDB Local or dynalite) or set DYNAMODB_ENDPOINT; for DynamoDB on AWS set AWS_REGION and credentials.',
        )
      }
      return { kind: 'dynamodb', endpoint, region: region ?? 'us-east-1', tableName: flags.table, namespace: 'checkout' }
    }
    case 's3': {
      const endpoint = flags.endpoint ?? (env.S3_ENDPOINT || env.AWS_ENDPOINT_URL || undefined)
      const region = flags.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined)
      const bucket = flags.bucket
      if (!bucket) throw usageError('--store s3 needs a bucket that exists: pass --bucket <name> or set CHECKOUT_S3_BUCKET.')
      if (!endpoint && !region) {
        throw usageError(
          '--store s3 needs an endpoint: pass --endpoint http://127.0.0.1:9000 (an S3-compatible server with conditional writes, e.g. MinIO) or set S3_ENDPOINT; for S3 on AWS set AWS_REGION and credentials.',
        )
      }
      return { kind: 's3', endpoint, region: region ?? 'us-east-1', bucket, prefix: flags.prefix }
    }
  }
}

/** Where the store is, for progress lines and errors. Never prints a password. */
export function describeStore(config: StoreConfig): string {
  switch (config.kind) {
    case 'memory':
      return 'memory (in this process only)'
    case 'pglite':
      return `pglite at ${config.path}`
    case 'postgres':
      return `postgres at ${config.databaseUrl ? redactUrl(config.databaseUrl) : 'the PG* environment (default 127.0.0.1:5432)'}, schema ${config.schema}`
    case 'dynamodb':
      return `dynamodb table ${config.tableName} at ${config.endpoint ?? `AWS ${config.region}`}`
    case 's3':
      return `s3 bucket ${config.bucket}/${config.prefix} at ${config.endpoint ?? `AWS ${config.region}`}`
  }
}

function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return '(a DATABASE_URL that is not a URL)'
  }
}
