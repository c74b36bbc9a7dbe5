import type { AddressInfo } from 'node:net'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import dynalite from 'dynalite'
import type { TestProject } from 'vitest/node'
import { createHarnessTable } from '../src/table.js'
import { type DynamoTestTarget, targetFromEnv } from './target.js'

declare module 'vitest' {
  interface ProvidedContext {
    dynamodb: DynamoTestTarget
  }
}

/**
 * With DYNAMODB_ENDPOINT set, the tests use that endpoint (real DynamoDB or DynamoDB
 * Local) and the credentials of the environment. Otherwise they start dynalite in
 * memory on a random loopback port and stop it afterwards.
 */
export default async function setup(project: TestProject) {
  let target = targetFromEnv()
  let stop = async () => {}
  if (!target) {
    const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, '127.0.0.1', () => resolve())
    })
    const { port } = server.address() as AddressInfo
    target = {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'dynalite', secretAccessKey: 'dynalite' },
      tableName: 'ai-harness-test',
      emulator: 'dynalite',
    }
    stop = () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
  const client = new DynamoDBClient(clientConfigOf(target))
  try {
    await createHarnessTable(client, { tableName: target.tableName })
  } finally {
    client.destroy()
  }
  project.provide('dynamodb', target)
  return stop
}

function clientConfigOf(target: DynamoTestTarget) {
  return { endpoint: target.endpoint, region: target.region, credentials: target.credentials, maxAttempts: 1 }
}
