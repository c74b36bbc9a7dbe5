/**
 * @tanstack/ai-harness — durable tools and sessions for TanStack AI, on any store.
 * @packageDocumentation
 */
export * from './contract/index.js'
export * from './json/json-types.js'
export { findNonJson, jsonCopy, jsonBytes, utf8Length, childPath, type NonJsonFinding } from './json/check-json.js'
export { SecretScanner, SECRET_MARKER, MIN_SECRET_LENGTH, type SecretFinding } from './secrets/secret-scanner.js'
