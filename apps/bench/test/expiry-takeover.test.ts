/**
 * The crash test of the stores without liveness (DynamoDB on dynalite, S3 on the test
 * server): the built bench's takeover section, as `pnpm bench -- --sections takeover`
 * runs it. A process drives a session into a step that never returns and is SIGKILLed
 * there; a running worker process resumes it, then the worker is SIGKILLed too and a
 * process with its slot id starts and resumes it again. These stores cannot prove a
 * process dead, so each resume waits for the dead one's lease (10 s) to run out: never
 * before it can have (that would be a second driver), and not for a poll after it (the
 * worker claims the session a renewal period early, learns the expiry from LEASE_HELD and
 * tries at that moment), within the slack of a loaded machine. Then graceful stops: a
 * driver gets SIGTERM and a running worker takes over at its next poll (these stores send
 * no notifications), with no lease to wait for. The times are logged; the bench's README
 * has them.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { EXPIRY_ONLY_LEASE_MS } from '@tanstack/ai-harness/store'
import { afterAll, expect, it } from 'vitest'
import type { BenchResult } from '../src/report/result.js'

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url))
/** The host's renewal period on these stores: the kill can land up to this long after the last renewal. */
const RENEW_EVERY_MS = EXPIRY_ONLY_LEASE_MS / 3
const WORKER_POLL_MS = 1_000
const SLACK_MS = 3_000

let dir: string | undefined
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

it('DynamoDB and S3: a SIGKILLed driver is resumed by a running worker, and a SIGKILLed worker by a restart of its slot, once the lease ran out', async () => {
  if (!existsSync(CLI)) throw new Error('Build the bench first: pnpm turbo run build --filter=bench...')
  dir = await mkdtemp(path.join(tmpdir(), 'bench-takeover-'))
  const out = path.join(dir, 'takeover.json')
  await new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, '--sections', 'takeover', '--stores', 'dynamodb', 's3', '--out', out],
      { timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, _stdout, stderr) => (error ? reject(new Error(`the takeover run failed: ${error.message}\n${stderr}`)) : resolve()),
    )
  })
  const result = JSON.parse(await readFile(out, 'utf8')) as BenchResult
  expect(result.failures).toEqual([])
  const rows = result.takeover ?? []
  expect(rows.map((r) => `${r.store}: ${r.scenario}`)).toEqual([
    'dynamodb: running worker',
    'dynamodb: restarted slot',
    'dynamodb: graceful stop',
    's3: running worker',
    's3: restarted slot',
    's3: graceful stop',
  ])
  for (const row of rows) {
    console.log(
      `takeover (${row.store}, ${row.scenario}): the step ran again ${row.afterKillMs} ms after the SIGKILL (${row.ofLease}× the lease)`,
    )
    expect(row.leaseMs).toBe(EXPIRY_ONLY_LEASE_MS)
    if (row.scenario === 'graceful stop') {
      // The lease was released: one poll of the worker, never a lease.
      expect(row.afterKillMs, `${row.store} ${row.scenario}`).toBeLessThan(WORKER_POLL_MS + SLACK_MS)
      continue
    }
    // Not before the dead process's lease can have run out: no second driver while it may live.
    expect(row.afterKillMs, `${row.store} ${row.scenario}`).toBeGreaterThanOrEqual(EXPIRY_ONLY_LEASE_MS - RENEW_EVERY_MS)
    // At the expiry, not at a poll after it: the rest is the resume on a loaded machine.
    expect(row.afterKillMs, `${row.store} ${row.scenario}`).toBeLessThan(EXPIRY_ONLY_LEASE_MS + SLACK_MS)
  }
}, 250_000)
