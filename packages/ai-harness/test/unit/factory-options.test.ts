import { toolDefinition } from '@tanstack/ai'
import { agentTool, defineHarness, durableTool, type HarnessError } from '@tanstack/ai-harness'
import { scriptedText } from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'

/** The error `make` throws; fails when it throws something that is not a harness error. */
function refusal(make: () => unknown): HarnessError {
  try {
    make()
  } catch (error) {
    return error as HarnessError
  }
  throw new Error('expected a refusal, but the factory accepted it')
}

const adapter = scriptedText(['ok'])
const definition = () => toolDefinition({ name: 'probe', description: 'p', inputSchema: z.object({}) })
const harness = () => defineHarness({ name: 'child', adapter })

describe('defineHarness checks its options', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['no options', undefined, /defineHarness takes its options as an object with name, adapter/],
    ['a missing name', { adapter }, /needs option "name": a non-empty string/],
    ['an empty name', { name: '', adapter }, /option "name" takes a non-empty string.*got an empty string/],
    ['no adapter', { name: 'h' }, /needs option "adapter": a TanStack AI text adapter/],
    [
      'an adapter that is not a text adapter',
      { name: 'h', adapter: { kind: 'image' } },
      /option "adapter" takes a TanStack AI text adapter.*; it got an object/,
    ],
    ['tools that are not an array', { name: 'h', adapter, tools: definition() }, /option "tools" takes an array of tools/],
    ['a tool without a name', { name: 'h', adapter, tools: [{}] }, /option "tools" takes an array of tools/],
    ['a negative parkAfterMs', { name: 'h', adapter, parkAfterMs: -1 }, /option "parkAfterMs" takes a number of milliseconds >= 0.*got -1/],
    ['a string parkAfterMs', { name: 'h', adapter, parkAfterMs: '5000' }, /option "parkAfterMs".*got a string/],
    ['a fractional maxStepBytes', { name: 'h', adapter, maxStepBytes: 1.5 }, /option "maxStepBytes" takes a whole number of bytes/],
    [
      'an unknown replay policy',
      { name: 'h', adapter, replay: { lookup: 'always' } },
      /option "replay" takes an object of tool names to 'safe' or 'never'/,
    ],
    [
      'a hook that is not a function',
      { name: 'h', adapter, onAfterToolCall: [() => {}, 'x'] },
      /option "onAfterToolCall" takes a hook function/,
    ],
    [
      'system prompts that are not strings',
      { name: 'h', adapter, systemPrompts: 'Be brief.' },
      /option "systemPrompts" takes an array of strings/,
    ],
    ['a misspelt option', { name: 'h', adapter, tool: [] }, /defineHarness has no option "tool"; its options are name, adapter, tools/],
  ]
  for (const [what, options, message] of cases) {
    it(`refuses ${what} with INVALID_ARGUMENT naming the option and what it takes`, () => {
      const error = refusal(() => defineHarness(options as never))
      expect(error.code).toBe('INVALID_ARGUMENT')
      expect(error.message).toMatch(message)
    })
  }

  it('never echoes a string it was given (it could be a secret)', () => {
    const error = refusal(() => defineHarness({ name: 'h', adapter, resolveSecret: 'sk_live_do_not_print' } as never))
    expect(error.message).toMatch(/option "resolveSecret" takes a function/)
    expect(error.message).not.toContain('sk_live_do_not_print')
  })

  it('takes every documented option', () => {
    const made = defineHarness({
      name: 'h',
      adapter,
      tools: [],
      systemPrompts: ['Be brief.'],
      middleware: [],
      onAfterToolCall: () => {},
      replay: { lookup: 'safe' },
      cutToolError: 'Interrupted.',
      maxStepBytes: 1024,
      resolveSecret: () => undefined,
      parkAfterMs: 0,
      modelOptions: {},
      debug: false,
      agentLoopStrategy: () => true,
    })
    expect(made.name).toBe('h')
  })
})

describe('durableTool and agentTool check their arguments', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'durableTool without a definition',
      () => durableTool(undefined as never, async () => 'x'),
      /durableTool: the tool definition must be a tool definition from toolDefinition/,
    ],
    [
      'durableTool with a plain object',
      () => durableTool({ name: 'x' } as never, async () => 'x'),
      /the tool definition must be a tool definition/,
    ],
    [
      'durableTool without execute',
      () => durableTool(definition(), 'run' as never),
      /durableTool: the execute function must be a function/,
    ],
    [
      'durableTool with an unknown replay',
      () => durableTool(definition(), async () => 'x', { replay: 'twice' as never }),
      /durableTool: option "replay" takes 'safe' or 'never'/,
    ],
    [
      'durableTool with a misspelt option',
      () => durableTool(definition(), async () => 'x', { replays: 'never' } as never),
      /durableTool has no option "replays"/,
    ],
    [
      'agentTool without options',
      () => agentTool(definition(), undefined as never),
      /agentTool takes its options as an object with harness, prompt/,
    ],
    [
      'agentTool with a harness that defineHarness did not make',
      () => agentTool(definition(), { harness: { name: 'x' } as never, prompt: () => 'go' }),
      /agentTool: option "harness" takes a harness from defineHarness/,
    ],
    [
      'agentTool without a prompt',
      () => agentTool(definition(), { harness: harness() } as never),
      /agentTool needs option "prompt": a function/,
    ],
  ]
  for (const [what, make, message] of cases) {
    it(`refuses ${what} with INVALID_ARGUMENT`, () => {
      const error = refusal(make)
      expect(error.code).toBe('INVALID_ARGUMENT')
      expect(error.message).toMatch(message)
    })
  }
})
