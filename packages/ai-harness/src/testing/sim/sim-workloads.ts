import { type AnyTool, type ChatMiddleware, toolDefinition } from '@tanstack/ai'
import { z } from 'zod'
import { agentTool } from '../../runtime/agent-tool.js'
import { durableTool, type Step, type StepRunContext } from '../../runtime/durable-tool.js'
import { defineHarness, type Harness } from '../../runtime/harness.js'
import type { StepOptions } from '../../runtime/step-retry.js'
import { scriptedText } from '../scripted-adapter.js'
import type { SimRandom } from './random.js'
import type { SimLedger } from './sim-ledger.js'
import type { SimProcess } from './sim-store.js'
import type { VirtualTime } from './virtual-time.js'

/** Every workload a simulated session can run: the prompt names it, and the model calls its tool. */
export const SIM_WORKLOADS = [
  'steps',
  'retry-long',
  'parallel',
  'sleep',
  'ask',
  'approve',
  'agent',
  'agent2',
  'never',
  'append',
  'timeout',
  'secret',
  'middleware',
  'reused',
  'poison',
  'verify',
  'once',
  'undo',
  'undo-cancel',
  'undo-agent-cancel',
  'long',
] as const
export type SimWorkload = (typeof SIM_WORKLOADS)[number]

/** The secret every simulated session is opened with: no byte of any log or stream may hold it. */
export const SIM_SECRET = 'sk_sim_7f3a9c1e5b2d4680'

/** What the tools of one process see of the world. */
export interface WorkloadContext {
  readonly time: VirtualTime
  readonly random: SimRandom
  readonly ledger: SimLedger
  readonly process: SimProcess
  /** The process's name and restart count, as invocations name it. */
  readonly processName: string
}

const never = <T>() => new Promise<T>(() => {})

/** Waits `ms` of virtual time; rejects when `signal` aborts; never ends once the process died. */
function pause(context: WorkloadContext, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      if (context.process.alive) resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      if (context.process.alive) reject(signal.reason)
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

interface EffectOptions {
  /** The chance that an attempt throws. */
  readonly fail?: number
  /** The longest an attempt takes, in virtual ms. */
  readonly maxMs?: number
  /** The chance (while faults are on) that the attempt kills its process. */
  readonly poison?: number
  readonly budget?: number
  /** The fn does not honour its signal (an email API without abort): a stopped run does not end it. */
  readonly ignoresSignal?: boolean
}

/** A step's fn with a side effect: logged in the ledger from its start to its end. */
function effect(context: WorkloadContext, options: EffectOptions = {}) {
  return async ({ idempotencyKey, attempt, signal }: StepRunContext): Promise<string> => {
    // A dead process starts nothing.
    if (!context.process.alive) return never()
    const logId = idempotencyKey.split(':').slice(0, -2).join(':')
    const invocation = context.ledger.begin(logId, idempotencyKey, attempt, options.budget ?? 1, context.processName)
    try {
      await pause(context, context.random.int(0, options.maxMs ?? 20), options.ignoresSignal ? new AbortController().signal : signal)
      if (context.process.faultsOn() && context.random.chance(options.poison ?? 0)) {
        context.process.crash()
        return never()
      }
      if (context.random.chance(options.fail ?? 0)) throw new Error(`simulated failure of attempt ${attempt}`)
      context.ledger.end(invocation, 'ok')
      return `done:${attempt}`
    } catch (error) {
      context.ledger.end(invocation, 'failed')
      throw error
    }
  }
}

/**
 * Whether a step's effect happened, as the system it touched knows: an invocation of its key
 * that ended 'ok' (the sim's effect lands when the fn ends well; a cut fn never landed it).
 */
export function effectOf(ledger: SimLedger, idempotencyKey: string): { done: string } | undefined {
  const logId = idempotencyKey.split(':').slice(0, -2).join(':')
  const key = `${ledger.incarnation(logId)}/${idempotencyKey}`
  const ok = ledger.invocations.find((i) => i.key === key && i.outcome === 'ok')
  return ok ? { done: `done:${ok.attempt}` } : undefined
}

/** The step names whose invariants are stricter (see `checkOutcomeSteps`): a verified mail, a once sms, and every compensation. */
export const OUTCOME_STEP = { verified: 'mail', once: 'sms' } as const

/** The steps of the `long` workload, each up to 700 virtual ms: a turn longer than a lease. */
const LONG_STEPS = 16

const noInput = z.object({})
const definition = (name: string, needsApproval = false) =>
  toolDefinition({ name, description: `simulated ${name}`, inputSchema: noInput, ...(needsApproval ? { needsApproval: true } : {}) })

function withRetry(step: Step, name: string, options: StepOptions, fn: (c: StepRunContext) => Promise<string>): Promise<string> {
  return step.do(name, options, fn)
}

/** The tools whose side effect takes no key: a verified mail, a once sms, a charge with an undo (on a failure, or on a cancel). */
function outcomeTools(context: WorkloadContext, fx: (options?: EffectOptions) => (c: StepRunContext) => Promise<string>) {
  const r = context.random
  return {
    // A mailer without keys: after a crash, verify looks in its outbox; now and then it cannot tell, and a person decides.
    verify: durableTool(definition('verify'), async (_a, { step }) =>
      step.do(
        OUTCOME_STEP.verified,
        { verify: ({ idempotencyKey }) => effectOf(context.ledger, idempotencyKey) ?? (r.chance(0.3) ? 'unknown' : 'not-done') },
        fx({ ignoresSignal: r.chance(0.5) }),
      ),
    ),
    once: durableTool(definition('once'), async (_a, { step }) =>
      step
        .do(OUTCOME_STEP.once, { once: true }, fx())
        .catch((e: { code?: string }) => (e.code === 'STEP_OUTCOME_UNKNOWN' ? 'unknown' : Promise.reject(e))),
    ),
    // A charge with a compensation, then a shipment that fails half the time: the call rolls the charge back.
    undo: durableTool(definition('undo'), async (_a, { step }) => {
      await step.do('charge', { undo: (_v, c) => fx()({ idempotencyKey: c.idempotencyKey, attempt: 1, signal: c.signal }) }, fx())
      await step.do('ship', fx({ fail: 0.5 }))
      return 'shipped'
    }),
    // A charge with a compensation, then a hold its session is cancelled in (the plan always cancels it): the cancel
    // rolls the charge back, and a crash in that rollback leaves the rest of it, and the cancel, to the next run.
    'undo-cancel': durableTool(definition('undo-cancel'), async (_a, { step }) => {
      await step.do('charge', { undo: (_v, c) => fx()({ idempotencyKey: c.idempotencyKey, attempt: 1, signal: c.signal }) }, fx())
      await step.sleep('hold', 8_000)
      await step.do('ship', fx())
      return 'shipped'
    }),
  }
}

/** The tools of the simulated harnesses, each bound to one process. */
function simTools(
  context: WorkloadContext,
): Record<Exclude<SimWorkload, 'agent' | 'agent2' | 'middleware' | 'reused' | 'undo-agent-cancel'>, AnyTool> {
  const fx = (options?: EffectOptions) => effect(context, options)
  const r = context.random
  return {
    steps: durableTool(definition('steps'), async (_a, { step }) => {
      const a = await step.do('a', fx({ ignoresSignal: true }))
      const b = await withRetry(step, 'b', { attempts: 3, delayMs: 50 }, fx({ fail: 0.3, budget: 3 }))
      return { a, b }
    }),
    'retry-long': durableTool(definition('retry-long'), async (_a, { step }) =>
      withRetry(step, 'pay', { attempts: 3, delayMs: 8_000 }, fx({ fail: 0.5, budget: 3 })).catch((e: Error) => `failed: ${e.message}`),
    ),
    parallel: durableTool(definition('parallel'), async (_a, { step }) => {
      const [x, y] = await Promise.all([
        // Not caught here: its park rejects the Promise.all at once, while y still runs.
        withRetry(step, 'x', { attempts: 2, delayMs: 8_000 }, fx({ fail: 0.6, budget: 2, maxMs: 5 })),
        step.do('y', fx({ maxMs: 40, ignoresSignal: true })),
      ])
      return { x, y }
    }),
    sleep: durableTool(definition('sleep'), async (_a, { step }) => {
      await step.do('before', fx())
      await step.sleep('nap', r.chance(0.5) ? 100 : 8_000)
      return step.do('after', fx())
    }),
    ask: durableTool(definition('ask'), async (_a, { step }) => {
      const answer = await step.ask({
        name: 'pick',
        message: 'Pick a number (not 13)',
        schema: z.object({
          n: z
            .number()
            .int()
            .refine((n) => n !== 13, 'not 13'),
        }),
      })
      return step.do(`use-${answer.n}`, fx())
    }),
    approve: durableTool(definition('approve', true), async (_a, { step }) => step.do('act', fx())),
    never: durableTool(definition('never'), async (_a, { step }) => step.do('n', fx()), { replay: 'never' }),
    append: durableTool(definition('append'), async (_a, { step, append }) => {
      const v = await step.do('a', fx({ ignoresSignal: true }))
      append([{ type: 'app.note', value: v }])
      return v
    }),
    timeout: durableTool(definition('timeout'), async (_a, { step }) =>
      withRetry(step, 'slow', { attempts: 3, delayMs: 10, timeoutMs: 50 }, fx({ maxMs: 80, budget: 3 })).catch((e: Error) => e.message),
    ),
    secret: durableTool(definition('secret'), async (_a, { step, secret }) => {
      const token = await secret('api')
      return step.do('use', async (c) => {
        await fx()(c)
        return token.length > 0 ? 'used' : 'none'
      })
    }),
    ...outcomeTools(context, fx),
    // A turn that runs for seconds in one process: a host whose renewals fail meanwhile must stop starting its steps.
    long: durableTool(definition('long'), async (_a, { step }) => {
      const done: string[] = []
      for (let i = 0; i < LONG_STEPS; i++) done.push(await step.do(`l${i}`, fx({ maxMs: 700 })))
      return done.length
    }),
    poison: durableTool(definition('poison'), async (_a, { step }) =>
      withRetry(step, 'p', { attempts: 2, delayMs: 10 }, fx({ poison: 0.5, budget: 2 })).catch((e: Error) => e.message),
    ),
  }
}

/** A scripted model: on a prompt it calls the tool the prompt names (twice with one id for 'reused'), then answers. */
function simModel(toolFor: (prompt: string) => string) {
  return scriptedText(({ messages }) => {
    const last = messages.at(-1)
    const prompt = String(messages.find((m) => m.role === 'user')?.content ?? '')
    if (last?.role === 'user') {
      return prompt === 'reused'
        ? { toolCalls: [{ name: 'steps', args: {}, id: 'dup' }] }
        : { toolCalls: [{ name: toolFor(prompt), args: {} }] }
    }
    if (prompt === 'reused' && messages.filter((m) => m.role === 'tool').length === 1)
      return { toolCalls: [{ name: 'steps', args: {}, id: 'dup' }] }
    return 'Done.'
  })
}

/** A middleware that adds the tool `mw` to every chat() run, as a plugin would. */
function addingTool(tool: AnyTool): ChatMiddleware {
  return { name: 'sim-adds-tool', onConfig: (_ctx, config) => ({ tools: [...config.tools.filter((t) => t.name !== tool.name), tool] }) }
}

/** The harnesses of one process: `sim` (every workload), and the agents it delegates to. */
export function simHarnesses(context: WorkloadContext): Harness[] {
  const tools = simTools(context)
  const helper = defineHarness({ name: 'sim-helper', adapter: simModel(() => 'steps'), tools: [tools.steps] })
  const helperTool = agentTool(definition('agent'), { harness: helper, prompt: () => 'steps' })
  const manager = defineHarness({ name: 'sim-manager', adapter: simModel(() => 'agent'), tools: [helperTool] })
  const managerTool = agentTool(definition('agent2'), { harness: manager, prompt: () => 'agent' })
  // A child agent that holds after a charge with a compensation: the cancel of its parent rolls the child back.
  const undoer = defineHarness({ name: 'sim-undoer', adapter: simModel(() => 'undo-cancel'), tools: [tools['undo-cancel']] })
  const undoerTool = agentTool(definition('undo-agent-cancel'), { harness: undoer, prompt: () => 'undo-cancel' })
  const mw = durableTool(toolDefinition({ name: 'mw', description: 'added by a middleware', inputSchema: noInput }), async (_a, { step }) =>
    step.do('m', effect(context)),
  )
  const sim = defineHarness({
    name: 'sim',
    adapter: simModel((prompt) => (prompt === 'middleware' ? 'mw' : prompt)),
    tools: [...Object.values(tools), helperTool, managerTool, undoerTool],
    middleware: [addingTool(mw)],
    // Workers open sessions without the client's secrets: they resolve them by name.
    resolveSecret: (name) => (name === 'api' ? SIM_SECRET : undefined),
  })
  return [sim, helper, manager, undoer]
}
