/**
 * Every entry point of the published libraries, for a typecheck with skipLibCheck off:
 * a declaration file of ours that names a module the tarball does not bring in, or a
 * type that does not exist, fails it (the consumer test ignores errors inside other
 * packages' declarations, which are theirs to fix).
 */
export type * as Core from '@tanstack/ai-harness'
export type * as Testing from '@tanstack/ai-harness/testing'
export type * as Http from '@tanstack/ai-harness/http'
export type * as Streams from '@tanstack/ai-harness/streams'
export type * as Memory from '@tanstack/ai-harness-memory'
export type * as Postgres from '@tanstack/ai-harness-postgres'
export type * as DynamoDb from '@tanstack/ai-harness-dynamodb'
export type * as S3 from '@tanstack/ai-harness-s3'
export type * as Conformance from '@tanstack/ai-harness-conformance'
export type * as Inspector from '@tanstack/ai-harness-inspector'
