import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { assertBuilt, hasStackTrace, runCli, tempDataDir } from './support/cli.js'

describe('flags, help and errors', () => {
  const cleanups: Array<() => void> = []
  beforeAll(assertBuilt)
  afterEach(() => {
    for (const remove of cleanups.splice(0)) remove()
  })
  const dataDir = () => {
    const data = tempDataDir()
    cleanups.push(data.remove)
    return data.dir
  }

  it('--help explains every flag and the exit codes, and exits 0', async () => {
    const run = await runCli(['--help'])
    expect(run.code).toBe(0)
    for (const flag of [
      '--store',
      '--data-dir',
      '--database-url',
      '--pg-schema',
      '--endpoint',
      '--region',
      '--table',
      '--bucket',
      '--prefix',
      '--json',
      '--order',
      '--email',
      '--session',
      '--crash',
      '--model',
      '--lease-ms',
      'log [options] <sessionId>',
    ]) {
      expect(run.stdout).toContain(flag)
    }
    expect(run.stdout).toMatch(/Exit codes:\n\s+0 {2}ok/)
    const log = await runCli(['log', '--help'])
    expect(log.code).toBe(0)
    expect(log.stdout).toContain('Usage: checkout log [options] <sessionId>')
  })

  it.each([
    [['--bogus'], "unknown option '--bogus'"],
    [['--store', 'redis'], "argument 'redis' is invalid. Allowed choices are pglite, memory, postgres, dynamodb, s3"],
    [['--crash', 'sometimes'], "argument 'sometimes' is invalid"],
    [['--order', '4/2'], 'An order id is 1 to 64 letters'],
    [['--email', 'nobody'], 'Give an address like ada@example.com'],
    [['--lease-ms', '10'], 'at least 1000'],
    [['log'], "missing required argument 'sessionId'"],
    [['unexpected'], 'too many arguments'],
  ])('bad usage %j exits 2 with a message and no stack trace', async (args, message) => {
    const run = await runCli([...args, '--data-dir', dataDir()])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(message)
    expect(run.stderr).toContain('--help')
    expect(run.stderr).not.toSatisfy(hasStackTrace)
    expect(run.stdout).toBe('')
  })

  it('--json with a bad flag still prints one JSON document', async () => {
    const run = await runCli(['--bogus', '--json', '--data-dir', dataDir()])
    expect(run.code).toBe(2)
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { exitCode: 2 } })
  })

  it.each([
    [['--store', 'dynamodb'], '--store dynamodb needs an endpoint'],
    [['--store', 's3', '--endpoint', 'http://127.0.0.1:9'], '--store s3 needs a bucket'],
    [['log', 'x', '--store', 'memory'], 'The memory store keeps nothing'],
  ])('a store without its settings %j exits 2 with what to set', async (args, message) => {
    const run = await runCli([...args, '--data-dir', dataDir()], {
      DYNAMODB_ENDPOINT: '',
      AWS_ENDPOINT_URL: '',
      AWS_REGION: '',
      AWS_DEFAULT_REGION: '',
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(message)
    expect(run.stderr).not.toSatisfy(hasStackTrace)
  })

  it.each([
    [
      ['--store', 'postgres', '--database-url', 'postgres://nobody@127.0.0.1:9/none'],
      'Cannot open the store (postgres at postgres://nobody@127.0.0.1:9/none',
    ],
    [
      ['--store', 'dynamodb', '--endpoint', 'http://127.0.0.1:9'],
      'Cannot open the store (dynamodb table ai-harness at http://127.0.0.1:9)',
    ],
    [
      ['--store', 's3', '--bucket', 'b', '--endpoint', 'http://127.0.0.1:9'],
      'Cannot open the store (s3 bucket b/checkout at http://127.0.0.1:9)',
    ],
    [['log', 'x', '--store', 'postgres', '--database-url', 'postgres://nobody@127.0.0.1:9/none'], 'Cannot open the store (postgres'],
  ])('an unreachable store %j exits 3 with a clear message', async (args, message) => {
    const run = await runCli([...args, '--data-dir', dataDir()])
    expect(run.code).toBe(3)
    expect(run.stderr).toContain(message)
    expect(run.stderr).toContain('ECONNREFUSED')
    expect(run.stderr).not.toSatisfy(hasStackTrace)
  })
})
