/** The folders of the libraries this repository publishes: the tooling tests and the consumer test, which hold each of them to a rule, share this list. */
export const LIBRARIES = [
  'packages/ai-harness',
  'packages/ai-harness-memory',
  'packages/ai-harness-postgres',
  'packages/ai-harness-dynamodb',
  'packages/ai-harness-s3',
  'conformance',
  'apps/inspector',
] as const
