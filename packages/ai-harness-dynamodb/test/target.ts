import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb'

/** Where the tests talk to DynamoDB: dynalite started by the global setup, or an endpoint from the environment. */
export interface DynamoTestTarget {
  endpoint: string
  region: string
  /** Left out for a real endpoint: the SDK's default chain (env, profile, role) supplies them. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  tableName: string
  emulator: 'dynalite' | 'none'
}

/** DYNAMODB_ENDPOINT (+ AWS_REGION, DYNAMODB_TABLE, AWS credentials) selects a real DynamoDB or DynamoDB Local. */
export function targetFromEnv(env: NodeJS.ProcessEnv = process.env): DynamoTestTarget | undefined {
  const endpoint = env.DYNAMODB_ENDPOINT
  if (!endpoint) return undefined
  return {
    endpoint,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    tableName: env.DYNAMODB_TABLE ?? 'ai-harness-test',
    emulator: 'none',
  }
}

/** Config for a new client on the target. `maxAttempts: 1`: the store does its own retrying. */
export function clientConfig(target: DynamoTestTarget): DynamoDBClientConfig {
  return {
    endpoint: target.endpoint,
    region: target.region,
    maxAttempts: 1,
    ...(target.credentials ? { credentials: target.credentials } : {}),
  }
}
