/**
 * Test helpers for harness users and store authors: a scripted model that needs no
 * network, machines (a crashable store and its host) for crash tests, a store that
 * crashes, and a store that injects faults per call. They run on every runtime; the TCP
 * fault proxy and the deterministic simulator need Node and are in `@tanstack/ai-harness/testing/node`.
 * @packageDocumentation
 */
export { ScriptedTextAdapter, scriptedText, lastMessage } from './scripted-adapter.js'
export type { Script, ScriptedReply, ScriptedToolCall, ScriptInput } from './scripted-adapter.js'
export { createManualClock, type ManualClock } from '../contract/clock.js'
export { crashable, type CrashableStore, type CrashPoint } from './crashable-store.js'
export { drain, runUntilCrash } from './streams.js'
export { unfencedAppends } from './unfenced-store.js'
export {
  type AgentCancelCrashOptions,
  type AgentCancelCrashReport,
  enumerateAgentCancelCrashPoints,
} from './agent-cancel-crash-points.js'
export {
  enumerateOutcomeCrashPoints,
  OUTCOME_SCENARIOS,
  type OutcomeCrashOptions,
  type OutcomeCrashReport,
  type OutcomeScenario,
  OutcomeSystems,
} from './outcome-crash-points.js'
export { entriesOf, type Machine, type MachineOptions, recordsOf, startMachine, TEST_LEASE_MS } from './machines.js'
export { oneStreamProblems, type StreamCrashReport, seqsOf, streamAcrossCrash } from './stream-crash.js'
export { SECRET_FORMS, type SecretForm } from './secret-forms.js'
export {
  faultyStore,
  appendOf,
  connectionReset,
  type FaultyStore,
  type FaultRule,
  type StoreFault,
  type StoreCall,
  type StoreOperation,
  type InjectedFault,
} from './faulty-store.js'
export {
  enumerateAgentCrashPoints,
  type AgentCrashOptions,
  type AgentCrashReport,
  type CrashPointResult,
  type CrashVariant,
  type CrashWorld,
} from './agent-crash-points.js'
