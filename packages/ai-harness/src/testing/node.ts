/**
 * `@tanstack/ai-harness/testing/node` — the test helpers that need Node's sockets (Node,
 * Bun and Deno have them; workerd does not): a TCP proxy that cuts, resets, blackholes and
 * delays a real store's connections, the network fault scenarios every store package
 * runs through it, and the deterministic simulator of whole worlds (hosts, workers and
 * clients on one virtual clock, with its invariants; it watches the process's unhandled
 * rejections).
 * @packageDocumentation
 */
export { startFaultProxy, type FaultProxy, type ProxyAction, type ProxyRule, type ProxyRuleHandle } from './fault-proxy.js'
export { networkFaultScenarios, type NetworkFaultScenario, type NetworkFaultTarget } from './network-fault-scenarios.js'
export { runSimWorld, type SimBackend, type SimReport, type SimWorldOptions } from './sim/sim-world.js'
export { planWorld, type SimPlan, type SimSessionPlan, SIM_LEASE_MS, SIM_MAX_SKEW_MS } from './sim/sim-plan.js'
export { SIM_WORKLOADS, SIM_SECRET, type SimWorkload } from './sim/sim-workloads.js'
export type { SimFaults } from './sim/sim-store.js'
export { SimRandom } from './sim/random.js'
export { shrinkWorld, encodePlan, decodePlan } from './sim/sim-shrink.js'
