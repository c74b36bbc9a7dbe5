/**
 * `@tanstack/ai-harness/testing/node` — the test helpers that need Node's sockets (Node,
 * Bun and Deno have them; workerd does not): a TCP proxy that cuts, resets, blackholes and
 * delays a real store's connections, and the network fault scenarios every store package
 * runs through it.
 * @packageDocumentation
 */
export { startFaultProxy, type FaultProxy, type ProxyAction, type ProxyRule, type ProxyRuleHandle } from './fault-proxy.js'
export { networkFaultScenarios, type NetworkFaultScenario, type NetworkFaultTarget } from './network-fault-scenarios.js'
