/**
 * Client settings for the local AWS stand-ins, apart from the targets so a recovery
 * child can use them without loading dynalite or the S3 test server.
 * `maxAttempts: 1`: the stores retry themselves.
 */
export const dynamoClientConfig = (endpoint: string) => ({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'dynalite', secretAccessKey: 'dynalite' },
  maxAttempts: 1,
})

/** Path-style on loopback, dummy credentials: the S3 test server checks no signatures. */
export const s3ClientConfig = (endpoint: string) => ({
  endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  maxAttempts: 1,
})
