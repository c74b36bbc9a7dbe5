import type { AddressInfo } from 'node:net'
import { DynamoDBClient } from '@aws-sdk/client-dynamodb'
import { CreateBucketCommand, HeadBucketCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3'
import type { HarnessStore } from '@tanstack/ai-harness'
import type { SimBackend } from '@tanstack/ai-harness/testing/node'
import { createHarnessTable, dynamoDbStore } from '@tanstack/ai-harness-dynamodb'
import { s3Store } from '@tanstack/ai-harness-s3'
import dynalite from 'dynalite'

/** Where networked worlds keep their data: an S3 endpoint and bucket (the S3 test server, MinIO, AWS). */
export interface S3SimTarget {
  readonly endpoint: string
  readonly bucket: string
}

/** Makes each world's data set on a networked store: a fresh namespace (DynamoDB) or prefix (S3) per world. */
export interface NetworkedBackends {
  readonly backend: () => Promise<SimBackend>
  close(): Promise<void>
}

const LOCAL = { region: 'us-east-1', credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' }, maxAttempts: 1 }

/** One world's store instances, closed together when the world ends (each process opens its own). */
function instances(open: (clock: Parameters<SimBackend['open']>[0]) => HarnessStore & { close(): Promise<void> }) {
  const opened: Array<{ close(): Promise<void> }> = []
  return {
    open: (clock: Parameters<SimBackend['open']>[0]) => {
      const store = open(clock)
      opened.push(store)
      return store
    },
    close: async () => {
      await Promise.allSettled(opened.map((s) => s.close()))
    },
  }
}

/**
 * DynamoDB worlds: on `DYNAMODB_ENDPOINT` (and `DYNAMODB_TABLE`, default `ai-harness-sim`) if set,
 * else on dynalite, started in this process on a loopback port (as the DynamoDB package's tests do).
 */
export function dynamoBackends(): NetworkedBackends {
  let ready: Promise<{ config: object; tableName: string; stop: () => Promise<void> }> | undefined
  let worlds = 0
  const start = async () => {
    const tableName = process.env.DYNAMODB_TABLE ?? 'ai-harness-sim'
    let endpoint = process.env.DYNAMODB_ENDPOINT
    let stop = async () => {}
    if (!endpoint) {
      const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(0, '127.0.0.1', () => resolve())
      })
      endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      stop = () => new Promise<void>((resolve) => server.close(() => resolve()))
    }
    const config = process.env.DYNAMODB_ENDPOINT ? { endpoint, maxAttempts: 1 } : { ...LOCAL, endpoint }
    const admin = new DynamoDBClient(config)
    try {
      await createHarnessTable(admin, { tableName }).catch((error: unknown) => {
        if ((error as { name?: string }).name !== 'ResourceInUseException') throw error
      })
    } finally {
      admin.destroy()
    }
    return { config, tableName, stop }
  }
  return {
    backend: async () => {
      ready ??= start()
      const { config, tableName } = await ready
      const namespace = `sim-${process.pid}-${++worlds}-${Date.now()}`
      return instances((clock) => dynamoDbStore({ tableName, clientConfig: config, namespace, clock }))
    },
    close: async () => {
      if (ready) await (await ready).stop()
    },
  }
}

/** S3 worlds on `target` (the S3 test server in the tests; `S3_ENDPOINT` and `S3_BUCKET` from the command line). */
export function s3Backends(target: S3SimTarget | undefined): NetworkedBackends {
  if (!target)
    throw new Error(
      '--store s3 needs S3_ENDPOINT and S3_BUCKET (an S3-compatible service: MinIO, or the S3 test server of the S3 package).',
    )
  const clientConfig: S3ClientConfig = { ...LOCAL, endpoint: target.endpoint, forcePathStyle: true }
  let ready: Promise<void> | undefined
  let worlds = 0
  const ensureBucket = async () => {
    const client = new S3Client(clientConfig)
    try {
      await client
        .send(new HeadBucketCommand({ Bucket: target.bucket }))
        .catch(() => client.send(new CreateBucketCommand({ Bucket: target.bucket })))
    } finally {
      client.destroy()
    }
  }
  return {
    backend: async () => {
      ready ??= ensureBucket()
      await ready
      const prefix = `sim-${process.pid}-${++worlds}-${Date.now()}/`
      return instances((clock) => s3Store({ bucket: target.bucket, clientConfig, prefix, clock }))
    },
    close: async () => {},
  }
}
