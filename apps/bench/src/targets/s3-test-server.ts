import { tsImport } from 'tsx/esm/api'

/** The part of the S3 store's test server (packages/ai-harness-s3/test/server) the bench uses. */
export interface S3TestServer {
  readonly endpoint: string
  readonly requestCount: number
  close(): Promise<void>
}

/**
 * The S3 store's test tooling is TypeScript outside this package and not exported, so
 * it is loaded by relative path through tsx at run time instead of being compiled in.
 * The same relative path works from `src/targets` and from `dist/targets`.
 */
const SERVER = new URL('../../../../packages/ai-harness-s3/test/server/s3-test-server.ts', import.meta.url)

export async function startS3TestServer(): Promise<S3TestServer> {
  const module = (await tsImport(SERVER.href, import.meta.url)) as { startS3TestServer(options?: { port?: number }): Promise<S3TestServer> }
  return module.startS3TestServer()
}
