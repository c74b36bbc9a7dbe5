/**
 * @tanstack/ai-harness-conformance — the suite that defines a working store.
 * @packageDocumentation
 */
export { runConformance } from './run-conformance.js'
export {
  runConformanceCases,
  allCases,
  casesFor,
  storeCases,
  durableSemanticsCases,
  type CaseResult,
  type CaseStatus,
} from './run-cases.js'
export { storeRetryCases } from './cases/store-retry-cases.js'
export { streamSectionCases } from './streams/index.js'
export {
  defaultStreamsHook,
  type LocksContext,
  type LocksUnderTest,
  type StreamsContext,
  type StreamsHook,
  type StreamsUnderTest,
} from './streams/streams-hook.js'
export { appendWriteFault, type RequestFault, sendWithFault } from './write-faults.js'
export { defineCase, expectCode, SyncThrowError, type CaseContext, type ConformanceCase, type NamespaceContext } from './case.js'
export { assertWellFormed, assertOneDriverAtATime, FakeBilling } from './durable/fixtures.js'
export {
  SKIP_KEYS,
  type SkipKey,
  type ConformanceOptions,
  type ClientFaults,
  type FaultyStoreContext,
  type NamespaceData,
  type ProcessesOption,
  type StoreContext,
  type WriteFault,
} from './options.js'
