import * as core from '@tanstack/ai-harness'
import * as testing from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'

describe('the installed @tanstack/ai-harness', () => {
  it('exports the app API and the store contract', () => {
    for (const name of [
      'durableTool',
      'defineHarness',
      'createHost',
      'createWorker',
      'agentTool',
      'HarnessError',
      'LogConflictError',
      'prepareBatch',
      'assertLogId',
    ]) {
      expect(core, name).toHaveProperty(name)
    }
    expect(testing).toHaveProperty('scriptedText')
  })

  it('keeps its internals out of the public API', () => {
    for (const name of ['DURABLE', 'AGENT', 'durableMetaOf', 'agentMetaOf']) expect(core, name).not.toHaveProperty(name)
  })
})
