import { chat, toolDefinition } from '@tanstack/ai'
import { defineHarness, durableTool, NonRetryableError, type StepOptions, type StepRunContext } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { plainJournal, runStep, type StepAttempt, type StepJournal, type StepLookup, type StepStop } from '../../src/runtime/step-engine.js'
import { type StepPolicy, stepPolicy } from '../../src/runtime/step-retry.js'
import { batchModel, createWorld, drain, recordsOf } from '../support/harness.js'

/** A journal that keeps what the engine asked of it, in order. */
function recordingJournal(lookup: StepLookup = { found: false, attempt: 1 }) {
  const calls: string[] = []
  const journal: StepJournal = {
    keyOf: (name) => `key:${name}`,
    lookup: async () => {
      calls.push('lookup')
      return lookup
    },
    open: async (_name, attempt): Promise<StepAttempt> => {
      calls.push(`open ${attempt}`)
      return {
        run: (work) => work(),
        recordValue: async (value) => {
          calls.push(`value ${JSON.stringify(value)}`)
          return { copied: value }
        },
        recordFailure: async (_error, timedOut, final) => {
          calls.push(`failure${timedOut ? ' timed-out' : ''}${final ? ' final' : ''}`)
          return { retryAt: 1 }
        },
        stopped: () => calls.push('stopped'),
        close: (thrown) => calls.push(thrown === undefined ? 'close' : 'close thrown'),
      }
    },
    waitRetry: async (_name, attempt) => {
      calls.push(`wait ${attempt}`)
    },
  }
  return { journal, calls }
}

const free = { signal: new AbortController().signal, isStop: () => false }
const policy = (options: StepOptions = {}): StepPolicy => stepPolicy({ delayMs: 0, ...options })

/** What `runStep` threw for a step `s` with `options`. */
const thrownBy = (journal: StepJournal, options: StepOptions, fn: (c: StepRunContext) => unknown, stop: StepStop = free) =>
  runStep(journal, 's', policy(options), fn, stop).then(
    () => undefined,
    (error: unknown) => error,
  )

/** A fn that fails its first `failures` attempts, then returns 'ok'. */
const failing = (failures: number, error: () => unknown = () => new Error('flaky')) => {
  return ({ attempt }: StepRunContext) => {
    if (attempt <= failures) throw error()
    return 'ok'
  }
}

describe('runStep: the rules of one step, on any journal', () => {
  it('a step the journal holds returns its value: fn does not run and no attempt opens', async () => {
    const { journal, calls } = recordingJournal({ found: true, value: 'logged' })
    const fn = vi.fn()
    expect(await runStep(journal, 's', policy(), fn, free)).toBe('logged')
    expect(fn).not.toHaveBeenCalled()
    expect(calls).toEqual(['lookup'])
  })

  it('a value is recorded before the step resolves, and the step resolves with the recorded copy', async () => {
    const { journal, calls } = recordingJournal()
    expect(await runStep(journal, 's', policy(), () => 'v', free)).toEqual({ copied: 'v' })
    expect(calls).toEqual(['lookup', 'open 1', 'value "v"', 'close'])
  })

  it('a failure with attempts left is recorded, then the retry waits, then the next attempt opens', async () => {
    const { journal, calls } = recordingJournal()
    await runStep(journal, 's', policy({ attempts: 3 }), failing(2), free)
    expect(calls).toEqual([
      'lookup',
      ...['open 1', 'failure', 'close', 'wait 1'],
      ...['open 2', 'failure', 'close', 'wait 2'],
      ...['open 3', 'value "ok"', 'close'],
    ])
  })

  it.each([
    { why: 'the last attempt', attempts: 2, error: new Error('down'), last: ['open 2', 'failure final', 'close'] },
    {
      why: 'a NonRetryableError, on its first attempt',
      attempts: 5,
      error: new NonRetryableError('no'),
      last: ['open 1', 'failure final', 'close'],
    },
  ])('a final failure ($why) is recorded as final and the step throws what fn threw, without a wait', async ({ attempts, error, last }) => {
    const { journal, calls } = recordingJournal()
    expect(
      await thrownBy(
        journal,
        { attempts },
        failing(9, () => error),
      ),
    ).toBe(error)
    expect(calls.slice(-3)).toEqual(last)
    expect(calls).not.toContain(`wait ${attempts}`)
  })

  it('a timed-out last attempt throws STEP_FAILED saying it timed out', async () => {
    const { journal, calls } = recordingJournal()
    const error = await runStep(journal, 's', policy({ timeoutMs: 1 }), () => new Promise(() => {}), free).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'STEP_FAILED', timedOut: true })
    expect(calls).toEqual(['lookup', 'open 1', 'failure timed-out final', 'close'])
  })

  it("the run's own failure is neither a value nor a failure: nothing is recorded or retried, and it passes on", async () => {
    const { journal, calls } = recordingJournal()
    const mine = new Error('the writer stopped')
    const stop = { signal: new AbortController().signal, isStop: (error: unknown) => error === mine }
    expect(
      await thrownBy(
        journal,
        { attempts: 3 },
        failing(9, () => mine),
        stop,
      ),
    ).toBe(mine)
    expect(calls).toEqual(['lookup', 'open 1', 'stopped', 'close thrown'])
  })

  it("an aborted signal (a stop, the call's time limit) makes any failure a stop: no record, no retry", async () => {
    const { journal, calls } = recordingJournal()
    const controller = new AbortController()
    const stop = { signal: controller.signal, isStop: () => false }
    const fn = () => {
      controller.abort()
      throw new Error('aborted fetch')
    }
    await expect(runStep(journal, 's', policy({ attempts: 3 }), fn, stop)).rejects.toThrow('aborted fetch')
    expect(calls).toEqual(['lookup', 'open 1', 'stopped', 'close thrown'])
  })

  it('the attempts go on from the attempt the journal gives, with one idempotency key', async () => {
    const { journal } = recordingJournal({ found: false, attempt: 3 })
    const seen: Array<[number, string]> = []
    await runStep(journal, 's', policy({ attempts: 4 }), ({ attempt, idempotencyKey }) => seen.push([attempt, idempotencyKey]), free)
    expect(seen).toEqual([[3, 'key:s']])
  })

  it('an attempt the journal refuses to open (a stale lease, a parking call) runs no fn', async () => {
    const { journal } = recordingJournal()
    const refused = new Error('lease lost')
    journal.open = async () => {
      throw refused
    }
    const fn = vi.fn()
    expect(await thrownBy(journal, {}, fn)).toBe(refused)
    expect(fn).not.toHaveBeenCalled()
  })
})

describe('plainJournal: plain chat() keeps nothing', () => {
  it('finds no step, copies values as JSON, and checks them', async () => {
    const journal = plainJournal('call-1', 'tool', free.signal, { ended: false }, (name, value) => {
      if (typeof value === 'function') throw new Error(`${name} is not JSON`)
    })
    expect(await journal.lookup('s', policy())).toEqual({ found: false, attempt: 1 })
    expect(journal.keyOf('s')).toBe('plain:call-1:s')
    const value = { a: [1] }
    const copy = await runStep(journal, 's', policy(), () => value, free)
    expect(copy).toEqual(value)
    expect(copy).not.toBe(value)
    await expect(runStep(journal, 't', policy(), () => () => 1, free)).rejects.toThrow('t is not JSON')
  })

  it('a retry of a call whose execute ended is refused with TOOL_CALL_SETTLED', async () => {
    const life = { ended: false }
    const journal = plainJournal('call-1', 'tool', free.signal, life, () => {})
    const step = runStep(
      journal,
      's',
      policy({ attempts: 2 }),
      () => {
        life.ended = true
        throw new Error('flaky')
      },
      free,
    )
    await expect(step).rejects.toMatchObject({ code: 'TOOL_CALL_SETTLED' })
  })
})

/** One row: a fn and step options; what the tool sees must be the same in a session and in plain chat(). */
interface Row {
  readonly name: string
  readonly options: StepOptions
  readonly failures: number
  readonly nonRetryable?: boolean
  /** The step records a session logs for the row, in order. */
  readonly logged: string[]
}

const ROWS: Row[] = [
  { name: 'a value', options: {}, failures: 0, logged: ['harness.step'] },
  { name: 'one failure without retries', options: {}, failures: 1, logged: [] },
  {
    name: 'a failure, then a value',
    options: { attempts: 2 },
    failures: 1,
    logged: ['harness.step.started', 'harness.step.failed', 'harness.step.started', 'harness.step'],
  },
  {
    name: 'out of attempts',
    options: { attempts: 2 },
    failures: 5,
    logged: ['harness.step.started', 'harness.step.failed', 'harness.step.started', 'harness.step.failed'],
  },
  {
    name: 'a NonRetryableError',
    options: { attempts: 3 },
    failures: 5,
    nonRetryable: true,
    logged: ['harness.step.started', 'harness.step.failed'],
  },
]

/** The tool of a row: the step's value, or the code and message of what it threw, as the tool saw it. */
function rowTool(row: Row) {
  const fn = failing(row.failures, () => (row.nonRetryable ? new NonRetryableError('refused') : new Error('flaky')))
  return durableTool(toolDefinition({ name: 'work', description: 'Works', inputSchema: z.object({}) }), async (_a, { step }) => {
    try {
      return { value: await step.do('s', { delayMs: 0, ...row.options }, fn) }
    } catch (error) {
      return { threw: (error as Error).message, code: (error as { code?: string }).code ?? null }
    }
  })
}

describe('one engine: a session (the log) and plain chat() (in memory) give the tool the same outcome', () => {
  it.each(ROWS)('$name', async (row) => {
    const plainAdapter = scriptedText(({ messages }) =>
      messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'work', args: {} }] } : 'ok',
    )
    await drain(chat({ adapter: plainAdapter, messages: [{ role: 'user', content: 'go' }], tools: [rowTool(row)] }))
    const plain = JSON.parse(String(plainAdapter.requests.at(-1)?.find((m) => m.role === 'tool')?.content))

    const world = createWorld()
    const harness = defineHarness({ name: 'rows', adapter: batchModel([{ name: 'work' }]), tools: [rowTool(row)] })
    const session = await world.start(harness, 'host-1').host.open({ sessionId: 'row' })
    await drain(session.send('go'))
    const entries = await session.entries()
    const [result] = recordsOf(entries, 'harness.tool.result')
    expect(result?.result).toEqual(plain)
    const steps = entries.map((e) => e.record.type).filter((type) => type.startsWith('harness.step'))
    expect(steps).toEqual(row.logged)
  })
})
