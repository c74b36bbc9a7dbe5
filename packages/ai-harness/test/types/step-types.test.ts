import { toolDefinition } from '@tanstack/ai'
import { durableTool, type Step } from '@tanstack/ai-harness'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

class Money {
  constructor(readonly cents: number) {}
  format(): string {
    return `${(this.cents / 100).toFixed(2)} EUR`
  }
}

interface Payment {
  id: string
  amount: number
  tags: string[]
  card?: { last4: string }
}

type Outcome = { status: 'paid'; id: string } | { status: 'declined'; reason: string } | null

/**
 * Compile-time rules: `pnpm --filter @tanstack/ai-harness-tests typecheck` fails if a
 * `@ts-expect-error` below stops being an error, or if an allowed value becomes one.
 * At run time the same values meet the JSON check (STEP_NOT_JSON) or pass it.
 */
async function stepValues(step: Step, outcomes: Record<string, unknown>) {
  const attempt = async (name: string, run: () => Promise<unknown>) => {
    try {
      outcomes[name] = { ok: await run() }
    } catch (error) {
      outcomes[name] = { code: (error as { code?: unknown }).code }
    }
  }

  // Refused at compile time.
  // @ts-expect-error a Date is not JSON: return date.toISOString()
  await attempt('date', () => step.do('date', () => new Date(0)))
  // @ts-expect-error a Date nested in an object is not JSON
  await attempt('nested date', () => step.do('nested date', () => ({ at: new Date(0) })))
  // @ts-expect-error an async fn resolving to a Date is not JSON
  await attempt('async date', () => step.do('async date', async () => new Date(0)))
  // @ts-expect-error a Map is not JSON
  await attempt('map', () => step.do('map', () => new Map([['a', 1]])))
  // @ts-expect-error a Set is not JSON
  await attempt('set', () => step.do('set', () => new Set([1])))
  // @ts-expect-error a class instance with methods is not JSON
  await attempt('class', () => step.do('class', () => new Money(500)))
  // @ts-expect-error an array that may hold undefined is not JSON
  await attempt('array with undefined', () => step.do('array with undefined', (): Array<number | undefined> => [1, undefined]))

  // The form with options keeps the same rule.
  // @ts-expect-error a Date is not JSON, with options too
  await attempt('date with options', () => step.do('date with options', { attempts: 2 }, () => new Date(0)))
  // @ts-expect-error an async fn resolving to a Map is not JSON, with options too
  await attempt('map with options', () => step.do('map with options', { timeoutMs: 1000 }, async () => new Map([['a', 1]])))
  // @ts-expect-error options are checked: attempts is a number
  await attempt('bad options', () => step.do('bad options', { attempts: 'twice' }, () => 1))

  // Allowed at compile time.
  const plain: { id: string; n: number; list: number[]; nested: { ok: boolean; none: null } } = await step.do('plain', () => ({
    id: 'a',
    n: 1,
    list: [1, 2],
    nested: { ok: true, none: null },
  }))
  const payment: Payment = await step.do('interface', (): Payment => ({ id: 'p1', amount: 5, tags: ['x'] }))
  const nothing: void = await step.do('void', () => {})
  const nothingAsync: void = await step.do('promise void', async () => {})
  const union: Outcome = await step.do('union', (): Outcome => ({ status: 'paid', id: 'ch_1' }))
  const unknownValue: unknown = await step.do('unknown', (): unknown => ({ from: 'an API' }))
  const withOptions: Payment = await step.do(
    'with options',
    { attempts: 3, delayMs: 0 },
    ({ attempt }): Payment => ({
      id: `p${attempt}`,
      amount: 5,
      tags: [],
    }),
  )
  const voidWithOptions: void = await step.do('void with options', { timeoutMs: 1000 }, async ({ signal }) => {
    signal.throwIfAborted()
  })
  outcomes.allowed = { ok: [plain, payment, nothing, nothingAsync, union, unknownValue, withOptions, voidWithOptions] }
}

describe('step value types', () => {
  it('values refused at compile time are refused at run time with STEP_NOT_JSON; allowed values pass', async () => {
    const outcomes: Record<string, unknown> = {}
    const tool = durableTool(
      toolDefinition({ name: 'types', description: 'Step value types', inputSchema: z.object({}) }),
      async (_a, { step }) => {
        await stepValues(step, outcomes)
        return 'checked'
      },
    )
    await tool.execute!({}, { toolCallId: 'call_types' } as never)
    for (const name of [
      'date',
      'nested date',
      'async date',
      'map',
      'set',
      'class',
      'array with undefined',
      'date with options',
      'map with options',
    ]) {
      expect(outcomes[name], name).toEqual({ code: 'STEP_NOT_JSON' })
    }
    expect(outcomes['bad options']).toEqual({ code: 'INVALID_ARGUMENT' })
    expect(outcomes.allowed).toEqual({
      ok: [
        { id: 'a', n: 1, list: [1, 2], nested: { ok: true, none: null } },
        { id: 'p1', amount: 5, tags: ['x'] },
        undefined,
        undefined,
        { status: 'paid', id: 'ch_1' },
        { from: 'an API' },
        { id: 'p1', amount: 5, tags: [] },
        undefined,
      ],
    })
  })
})
