/**
 * Test helpers for harness users and store authors: a scripted model that needs no
 * network, machines (a crashable store and its host) for crash tests, a store that
 * crashes, a store that injects faults per call, and a deterministic simulator of whole
 * worlds (hosts, workers and clients on one virtual clock) with its invariants. They run on
 * every runtime; the TCP fault proxy needs Node's sockets and is in `@tanstack/ai-harness/testing/node`.
 * @packageDocumentation
 */
export { ScriptedTextAdapter, scriptedText, lastMessage } from './scripted-adapter.js'
export type { Script, ScriptedReply, ScriptedToolCall, ScriptInput } from './scripted-adapter.js'
export { createManualClock, type ManualClock } from '../contract/clock.js'
export { crashable, type CrashableStore, type CrashPoint } from './crashable-store.js'
export { drain, runUntilCrash } from './streams.js'
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
export { runSimWorld, type SimBackend, type SimReport, type SimWorldOptions } from './sim/sim-world.js'
export { planWorld, type SimPlan, type SimSessionPlan, SIM_LEASE_MS, SIM_MAX_SKEW_MS } from './sim/sim-plan.js'
export { SIM_WORKLOADS, SIM_SECRET, type SimWorkload } from './sim/sim-workloads.js'
export type { SimFaults } from './sim/sim-store.js'
export { SimRandom } from './sim/random.js'
export { shrinkWorld, encodePlan, decodePlan } from './sim/sim-shrink.js'
