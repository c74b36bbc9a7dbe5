import { toolDefinition } from '@tanstack/ai'
import { z } from 'zod'
import type { ManualClock } from '../contract/clock.js'
import type { HarnessStore, LogRecord } from '../contract/types.js'
import { agentTool, childSessionId } from '../runtime/agent-tool.js'
import { durableTool } from '../runtime/durable-tool.js'
import { defineHarness, type Harness } from '../runtime/harness.js'
import { createWorker } from '../runtime/worker.js'
import type { CrashPoint } from './crashable-store.js'
import { startMachine, TEST_LEASE_MS } from './machines.js'
import { chargeAndMail, OutcomeSystems, readAll, runFirstProcess } from './outcome-crash-points.js'
import { scriptedText } from './scripted-adapter.js'
import { drain } from './streams.js'

/**
 * Crash points of a cancel of a parent agent whose call runs a child agent (one or two
 * levels deep) that waits for a person after finished steps with `undo`: the cancel
 * rolls the child back. A run without a crash lists every append of the cancel, in every
 * session (the parent's, each child's); then for each, before and after it, the process
 * dies there and another takes over (a host that resumes the parent, or a worker). Every
 * cut must end with every session's turn cancelled, the model not called again, each
 * finished step undone once (or said not undone), and nothing undone twice.
 */

const PARENT = 'agent-cancel'
const REASON = 'the customer changed their mind'

export interface AgentCancelCrashOptions {
  /** 1: the parent's call runs the shop agent; 2: it runs a desk agent whose call runs the shop agent. */
  readonly depth: 1 | 2
  /** Who takes over after the crash: a host that resumes the parent, or only a worker. */
  readonly takeOver: 'host' | 'worker'
  /** A fresh world per run: its clock and a way to open store instances on one data set. */
  world(): Promise<{ clock: ManualClock; openStore(): Promise<HarnessStore>; close?(): Promise<void> }>
}

export interface AgentCancelCrashReport {
  /** Each append of the cancel in the run without a crash, as `session [types]`, in order. */
  readonly writes: string[]
  readonly points: Array<{ k: number; point: CrashPoint; write: string }>
  /** One line per broken invariant, naming the point; empty when all hold. */
  readonly failures: string[]
}

/** Every crash point of the cancel: before and after each of its appends, in every session. */
export async function enumerateAgentCancelCrashPoints(options: AgentCancelCrashOptions): Promise<AgentCancelCrashReport> {
  const reference = await runPoint(options, undefined)
  const failures = reference.failures.map((f) => `the run without a crash: ${f}`)
  const points: AgentCancelCrashReport['points'] = []
  for (let k = 1; k <= reference.writes.length; k++) {
    for (const point of ['before', 'after'] as const) {
      const run = await runPoint(options, { k, point })
      const write = reference.writes[k - 1]!
      if (!run.crashed) failures.push(`${point} append ${k} ${write}: the run never got there; the scenario is not deterministic`)
      failures.push(...run.failures.map((f) => `${point} append ${k} ${write}: ${f}`))
      points.push({ k, point, write })
    }
  }
  return { writes: reference.writes, points, failures }
}

/** The sessions of the scenario, parent first, as [id, name in reports]. */
function sessionsOf(depth: 1 | 2): Array<[string, string]> {
  const child = childSessionId(PARENT, 'agent-1')
  const sessions: Array<[string, string]> = [
    [PARENT, 'parent'],
    [child, 'child'],
  ]
  if (depth === 2) sessions.push([childSessionId(child, 'agent-2'), 'grandchild'])
  return sessions
}

/** A harness whose model calls `tool` (with a fixed call id, so every run logs the same) for the prompt, then says it is done. */
function scripted(name: string, tools: Harness['options']['tools'], call: { name: string; id: string }): Harness {
  const adapter = scriptedText(({ messages }) =>
    messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: call.name, args: {}, id: call.id }] } : 'Done.',
  )
  return defineHarness({ name, adapter, tools })
}

function harnessesOf(systems: OutcomeSystems, depth: 1 | 2): Harness[] {
  const order = durableTool(
    toolDefinition({ name: 'order', description: 'Charge and mail', inputSchema: z.object({}) }),
    async (_a, { step }) => {
      await chargeAndMail(systems, step, 'verify')
      await step.ask({ name: 'ship', message: 'Ship it?', schema: z.object({ ok: z.boolean() }) })
    },
  )
  const shop = scripted('shop', [order], { name: 'order', id: 'order-1' })
  const agent = (harness: Harness) =>
    agentTool(toolDefinition({ name: harness.name, description: `The ${harness.name} agent`, inputSchema: z.object({}) }), {
      harness,
      prompt: () => 'Place the order.',
    })
  if (depth === 1) return [scripted('boss', [agent(shop)], { name: 'shop', id: 'agent-1' }), shop]
  const desk = scripted('desk', [agent(shop)], { name: 'shop', id: 'agent-2' })
  return [scripted('boss', [agent(desk)], { name: 'desk', id: 'agent-1' }), desk, shop]
}

// long: one crash point told in order (the first process up to its crash, the take-over, the checks); they share the world
async function runPoint(options: AgentCancelCrashOptions, crash: { k: number; point: CrashPoint } | undefined) {
  const world = await options.world()
  const systems = new OutcomeSystems()
  const harnesses = harnessesOf(systems, options.depth)
  const names = new Map(sessionsOf(options.depth))
  // The first process's own instance: closed at the end (its crashed wrapper would hang), so a database's connections stay few.
  const firstStore = await world.openStore()
  const first = startMachine(firstStore, { harnesses, clock: world.clock, hostId: 'first' })
  const writes: string[] = []
  let cancelling = false
  let n = 0
  first.store.crashOnAppend((records, logId) => {
    if (!cancelling) return false
    writes.push(`${names.get(logId) ?? logId} [${records.map((r) => r.type).join(',')}]`)
    return crash !== undefined && ++n === crash.k
  }, crash?.point ?? 'after')
  const direct = await world.openStore()
  const failures: string[] = []
  const firstFailure = await runFirstProcess(first.store, async () => {
    const session = await first.host.open({ sessionId: PARENT, harness: 'boss' })
    await drain(session.send('go'))
    if (session.status !== 'parked') failures.push(`the parent's turn did not wait for its child (${session.status})`)
    cancelling = true
    await session.cancel(REASON)
    await session.close()
  })
  if (firstFailure !== undefined) failures.push(firstFailure)
  if (first.store.crashed) {
    await takeOver(options, world.clock, harnesses, direct, names).catch((error: unknown) => {
      failures.push(`the take-over failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`)
    })
  }
  const logs = new Map<string, LogRecord[]>()
  for (const id of names.keys())
    logs.set(
      id,
      (await readAll(direct, id)).map((e) => e.record),
    )
  failures.push(...checkEnd(logs, names, systems, options.depth))
  await direct.close?.()
  await firstStore.close?.()
  await world.close?.()
  return { writes, crashed: first.store.crashed, failures }
}

/** Another process takes over: a host that resumes the parent, or only a worker; a cancel that never landed anywhere is made again by the person. */
async function takeOver(
  options: AgentCancelCrashOptions,
  clock: ManualClock,
  harnesses: Harness[],
  direct: HarnessStore,
  names: Map<string, string>,
): Promise<void> {
  clock.advance(TEST_LEASE_MS + 1)
  const second = startMachine(direct, { harnesses, clock, hostId: 'second' })
  let landed = false
  for (const id of names.keys()) {
    const records = (await readAll(direct, id)).map((e) => e.record)
    if (records.some((r) => r.type === 'harness.rollback' || r.type === 'harness.turn.cancelled')) landed = true
  }
  if (options.takeOver === 'host' || !landed) {
    const session = await second.host.open({ sessionId: PARENT, harness: 'boss' })
    if (options.takeOver === 'host') await drain(session.resume())
    if (!landed && session.needsRecovery) await session.cancel(REASON)
    await session.close()
  }
  const worker = createWorker({ store: direct, harnesses, clock, leaseMs: TEST_LEASE_MS })
  for (let round = 0; round < 4; round++) {
    clock.advance(TEST_LEASE_MS + 1)
    await worker.poll()
  }
  await worker.stop()
  await second.host.shutdown()
}

/** The invariants at the end: every turn cancelled, the model not called again, each effect undone once (or said not undone). */
function checkEnd(logs: Map<string, LogRecord[]>, names: Map<string, string>, systems: OutcomeSystems, depth: 1 | 2): string[] {
  const problems: string[] = []
  for (const [id, records] of logs) {
    const name = names.get(id)!
    const last = records.findLast((r) => r.type.startsWith('harness.turn.') && r.type !== 'harness.turn.resumed')
    if (last?.type !== 'harness.turn.cancelled')
      problems.push(`the ${name}'s turn ended with ${last?.type}: ${records.map((r) => r.type.replace(/^harness\./, '')).join(' ')}`)
    const models = records.filter((r) => r.type === 'harness.assistant').length
    if (models !== 1) problems.push(`the ${name}'s model was called ${models} times (a cancelled turn calls it no more)`)
    const results = records.filter((r) => r.type === 'harness.tool.result').map((r) => String(r.toolCallId))
    if (new Set(results).size !== results.length) problems.push(`a call of the ${name} has two results`)
  }
  const shopId = [...names.keys()][depth]!
  const results = logs.get(shopId)!.filter((r) => r.type === 'harness.tool.result')
  const error = String((results[0]?.result as { error?: unknown } | null)?.error ?? '')
  if (results.length !== 1 || results[0]!.ok !== false || !error.includes('The call was rolled back: '))
    problems.push(`the order call ended with ${JSON.stringify(results.map((r) => r.result))}`)
  for (const [name, effects] of [
    ['charge', systems.charges],
    ['mail', systems.sent],
  ] as const) {
    const key = `${shopId}:order-1:${name}`
    const undone = systems.refunds.get(key) ?? 0
    if ((effects.get(key) ?? 0) > 1 + (name === 'mail' ? (systems.rerunsAllowed.get(key) ?? 0) : 0))
      problems.push(`${name} ran ${effects.get(key)} times`)
    if (undone > 1) problems.push(`the compensation of ${name} ran ${undone} times`)
    if (effects.has(key) && undone !== 1 && !error.includes(`"${name}" may not be undone`))
      problems.push(`${name} ran and was never undone (the error: ${error})`)
    if (error.includes(`"${name}" undone`) && undone !== 1) problems.push(`${name} is said undone, but its undo ran ${undone} times`)
  }
  return problems
}
