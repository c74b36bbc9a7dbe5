import * as core from '@tanstack/ai-harness'
import * as log from '@tanstack/ai-harness/log'
import * as store from '@tanstack/ai-harness/store'
import * as testing from '@tanstack/ai-harness/testing'
import { describe, expect, it } from 'vitest'

describe('the installed @tanstack/ai-harness', () => {
  it('exports the app API at the root, the log at /log and the store contract at /store', () => {
    for (const name of ['durableTool', 'defineHarness', 'createHost', 'createWorker', 'agentTool', 'HarnessError', 'isHarnessError']) {
      expect(core, name).toHaveProperty(name)
    }
    for (const name of ['foldLog', 'readAndFold', 'openWaits', 'SecretScanner', 'childSessionId']) expect(log, name).toHaveProperty(name)
    for (const name of ['LogConflictError', 'prepareBatch', 'assertLogId']) expect(store, name).toHaveProperty(name)
    expect(testing).toHaveProperty('scriptedText')
  })

  it('keeps the fold, the records and the store plumbing off the root entry', () => {
    for (const name of ['foldLog', 'readAndFold', 'SecretScanner', 'prepareBatch', 'LogConflictError', 'jsonCopy']) {
      expect(core, name).not.toHaveProperty(name)
    }
  })

  it('keeps its internals out of the public API', () => {
    for (const name of ['DURABLE', 'AGENT', 'durableMetaOf', 'agentMetaOf']) expect(core, name).not.toHaveProperty(name)
  })
})
