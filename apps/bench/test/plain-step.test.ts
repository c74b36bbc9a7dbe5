import { execFileSync } from 'node:child_process'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './run-cli.js'
import type { BenchResult } from '../src/report/result.js'
import { BEFORE_ISSUE_31 } from '../src/sections/plain-step.js'

// The built CLI's plain-step section, quick: it builds the commit before issue #31 from git
// and runs the same plain step on both builds. This checks the writes, never the times.
// A clone without that history (a shallow one) compares with its own HEAD instead: the
// same machinery, and the same writes.
const hasCommit = (commit: string) => {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const baseline = hasCommit(BEFORE_ISSUE_31) ? BEFORE_ISSUE_31 : execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim()
let run: Awaited<ReturnType<typeof runCli>>
let result: BenchResult
let stdout: string

beforeAll(async () => {
  run = await runCli(['--quick', '--sections', 'plain', '--stores', 'memory', '--baseline', baseline], 120_000)
  result = run.result
  stdout = run.stdout
}, 130_000)

afterAll(async () => {
  await run?.remove()
})

describe('a plain step.do on this build and on the commit before issue #31', () => {
  it('runs both builds in one run', () => {
    expect(result.failures).toEqual([])
    expect(result.plainStep?.builds.map((b) => b.build)).toEqual(['this build', baseline === BEFORE_ISSUE_31 ? 'before #31' : 'baseline'])
    expect(result.plainStep?.builds[1]?.commit).toBe(baseline)
    for (const build of result.plainStep?.builds ?? []) expect(build.step.samples, build.build).toBeGreaterThan(0)
    expect(stdout).toContain('### 8. A plain step.do')
  })

  it('writes exactly what it wrote before: one append of one record of the same bytes per step', () => {
    const [ours, before] = result.plainStep!.builds
    expect(ours).toMatchObject({ appendsPerStep: [1], recordsPerAppend: [1] })
    expect(before).toMatchObject({ appendsPerStep: [1], recordsPerAppend: [1] })
    expect(ours!.bytesPerStep).toEqual(before!.bytesPerStep)
    expect(result.plainStep!.sameWrites).toBe(true)
  })
})
