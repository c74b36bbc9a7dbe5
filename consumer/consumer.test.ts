/**
 * The packages as a user gets them: `pnpm pack` each library (as `pnpm publish` would),
 * `npm install` the tarballs into a new project outside the workspace, and there
 * typecheck and run a durable tool on the memory store and on PGlite across a crash,
 * and run the conformance suite in the project's own vitest against a store of its own.
 * This catches what the workspace hides: a missing dependency, a wrong `exports` entry,
 * a type that does not resolve, a file left out of the tarball.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LIBRARIES } from '../tooling/test/libraries.js'

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, '..')

/** What the project installs from the registry beside the tarballs: the versions this repository tests with. */
const REGISTRY_DEPENDENCIES = {
  '@tanstack/ai': '0.58.0',
  zod: '4.6.7',
  '@electric-sql/pglite': '0.5.17',
}
const REGISTRY_DEV_DEPENDENCIES = {
  vitest: '4.1.12',
  vite: '8.3.8',
  typescript: '5.9.3',
  '@types/node': '20.19.43',
}

const NPM_INSTALL_MS = 600_000

let work: string
let app: string
let failed = false

/**
 * The environment of the commands run in the project: without this run's vitest and
 * pnpm settings, which would leak into npm and into the project's own vitest.
 */
function cleanEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_registry', 'npm_config_cache', 'npm_config_proxy', 'npm_config_https_proxy', 'npm_config_cafile'])
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    const lower = name.toLowerCase()
    if (name.startsWith('VITEST') || name === 'TEST' || name === 'NODE_OPTIONS') continue
    if (lower.startsWith('npm_') && !keep.has(lower)) continue
    if (lower.startsWith('pnpm_')) continue
    env[name] = value
  }
  return { ...env, NODE_ENV: 'test', NO_COLOR: '1' }
}

/** Runs a command to its end; throws with its output when it fails or takes longer than `timeoutMs`. */
function run(command: string, args: string[], cwd: string, timeoutMs: number): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile(command, args, { cwd, env: cleanEnv(), timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const why = error.killed ? `timed out after ${timeoutMs} ms` : `exit ${error.code ?? error.signal}`
        reject(new Error(`${command} ${args.join(' ')} (in ${cwd}) ${why}\n${stdout}\n${stderr}`.slice(-20_000)))
      } else {
        resolvePromise(stdout)
      }
    })
  })
}

const tsc = () => join(app, 'node_modules', 'typescript', 'bin', 'tsc')
const lastJsonLine = (output: string) => JSON.parse(output.trim().split('\n').at(-1) ?? 'null')

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'ai-harness-consumer-'))
  const tarballs = join(work, 'tarballs')
  mkdirSync(tarballs)
  for (const library of LIBRARIES) {
    const dir = join(repoRoot, library)
    if (!existsSync(join(dir, 'dist', 'index.js')))
      throw new Error(`${library} is not built: run pnpm turbo run build first (pnpm test does).`)
    await run('pnpm', ['pack', '--pack-destination', tarballs], dir, 120_000)
  }
  const files = readdirSync(tarballs).filter((f) => f.endsWith('.tgz'))
  expect(files).toHaveLength(LIBRARIES.length)

  app = join(work, 'app')
  cpSync(join(here, 'app'), app, { recursive: true })
  const packed: Record<string, string> = {}
  for (const file of files) {
    const name = JSON.parse(await run('tar', ['-xzOf', join(tarballs, file), 'package/package.json'], work, 30_000)).name as string
    packed[name] = `file:../tarballs/${file}`
  }
  writeFileSync(
    join(app, 'package.json'),
    `${JSON.stringify(
      {
        name: 'ai-harness-consumer',
        private: true,
        type: 'module',
        dependencies: { ...packed, ...REGISTRY_DEPENDENCIES },
        devDependencies: REGISTRY_DEV_DEPENDENCIES,
      },
      null,
      2,
    )}\n`,
  )
  // --prefer-offline: the npm cache answers for every version it holds, so a warm run
  // does not wait on the registry.
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], app, NPM_INSTALL_MS)
}, NPM_INSTALL_MS + 180_000)

afterAll(() => {
  if (!work) return
  if (failed && process.env.KEEP_CONSUMER_PROJECT) console.log(`consumer project kept at ${work}`)
  else rmSync(work, { recursive: true, force: true })
})

const track = <T>(promise: Promise<T>): Promise<T> =>
  promise.catch((error) => {
    failed = true
    throw error
  })

describe('the packed libraries, installed with npm in a project outside the workspace', () => {
  it('install every library with its peers, and nothing from the workspace', () => {
    const installed = (name: string) => JSON.parse(readFileSync(join(app, 'node_modules', name, 'package.json'), 'utf8'))
    for (const name of [
      '@tanstack/ai-harness',
      '@tanstack/ai-harness-memory',
      '@tanstack/ai-harness-postgres',
      '@tanstack/ai-harness-dynamodb',
      '@tanstack/ai-harness-s3',
      '@tanstack/ai-harness-conformance',
      '@tanstack/ai-harness-inspector',
    ]) {
      const manifest = installed(name)
      expect(manifest.private, name).toBeUndefined()
      expect(JSON.stringify(manifest), `${name}: no workspace: ranges in a published manifest`).not.toContain('workspace:')
      expect(existsSync(join(app, 'node_modules', name, 'LICENSE')), `${name} ships its LICENSE`).toBe(true)
      // A library that pinned its own core, @tanstack/ai or zod would put a second copy in an
      // app on another version: those are peers, never dependencies.
      for (const shared of ['@tanstack/ai', '@tanstack/ai-harness', 'zod']) {
        expect(manifest.dependencies?.[shared], `${name}: ${shared} is a peer, not a dependency`).toBeUndefined()
      }
    }
    // One copy of the core, of @tanstack/ai and of zod: every library takes them as peers.
    const copies = (name: string) =>
      run('npm', ['ls', name, '--all', '--parseable'], app, 60_000).then((out) => new Set(out.trim().split('\n').filter(Boolean)).size)
    return track(
      Promise.all([copies('@tanstack/ai-harness'), copies('@tanstack/ai'), copies('zod')]).then(([harness, ai, zod]) => {
        expect(harness).toBe(1)
        expect(ai).toBe(1)
        expect(zod).toBe(1)
      }),
    )
  })

  it('typecheck and build a user project against the published types', async () => {
    await track(run(process.execPath, [tsc(), '-p', '.'], app, 180_000))
  })

  it('typecheck every entry point with skipLibCheck off: no error inside our declaration files', async () => {
    const output = await run(process.execPath, [tsc(), '-p', 'tsconfig.published-types.json'], app, 180_000).catch(
      (error: Error) => error.message,
    )
    const ours = output.split('\n').filter((line) => /^(node_modules\/@tanstack\/ai-harness[^/]*\/|src\/|test\/).*error TS/.test(line))
    expect(ours).toEqual([])
  })

  it('memory store: a crash right after the charge step landed, resumed by another host: one charge, one invoice', async () => {
    const out = await track(run(process.execPath, ['dist/src/memory-crash.js', work], app, 60_000))
    expect(lastJsonLine(out)).toEqual({
      charges: 1,
      chargeCalls: 1,
      invoices: 1,
      chargesAtCrash: 1,
      needsRecovery: true,
      results: [{ chargeId: 'ch_o1' }],
    })
  })

  it("the inspector, mounted in the app's own server under a path with the app's own authorize: page, CSP, scoped API", async () => {
    const out = await track(run(process.execPath, ['dist/src/inspector-mount.js'], app, 60_000))
    expect(lastJsonLine(out)).toEqual({
      page: 200,
      csp: true,
      loadsScripts: true,
      script: 200,
      sessions: { sessions: ['tenant-a/order-1'], next: null },
      refused: 403,
    })
    // The page's files are in the tarball, beside the code.
    for (const file of ['index.html', 'app.js', 'dom.js', 'schema-form.js', 'app.css']) {
      expect(existsSync(join(app, 'node_modules', '@tanstack/ai-harness-inspector', 'public', file)), file).toBe(true)
    }
  })

  it('PGlite: a process SIGKILLed inside the invoice step, resumed by a new process: one charge, one invoice', async () => {
    const data = join(work, 'pglite-run')
    mkdirSync(data)
    const child: ChildProcess = spawn(process.execPath, ['dist/src/pglite-run.js', data, 'start'], { cwd: app, env: cleanEnv() })
    let stderr = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    const exited = new Promise<NodeJS.Signals | null>((resolveExit) => child.on('exit', (_code, signal) => resolveExit(signal)))
    const charged = new Promise<void>((resolveLine, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => line === 'charged' && resolveLine())
      exited.then(() => reject(new Error(`the first process exited before the charge:\n${stderr}`)))
    })
    await track(charged)
    child.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')

    const out = await track(run(process.execPath, ['dist/src/pglite-run.js', data, 'resume'], app, 120_000))
    expect(lastJsonLine(out)).toEqual({ charges: 1, chargeCalls: 1, invoices: 1, needsRecovery: true, results: [{ chargeId: 'ch_o1' }] })
  })

  it("run the conformance suite in the project's own vitest against its own store, and see the public API without internals", async () => {
    const report = join(work, 'vitest-report.json')
    await track(
      run(
        process.execPath,
        [join(app, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--reporter=json', `--outputFile=${report}`],
        app,
        240_000,
      ),
    )
    const result = JSON.parse(readFileSync(report, 'utf8')) as {
      numFailedTests: number
      numPassedTests: number
      numPendingTests: number
      testResults: Array<{ name: string; assertionResults: Array<{ fullName: string; status: string }> }>
    }
    const tests = result.testResults.flatMap((file) => file.assertionResults)
    const conformance = tests.filter((t) => t.fullName.startsWith('conformance: tiny'))
    expect(result.numFailedTests).toBe(0)
    // The log cases pass; the lease, wakeup and session listing cases are skipped with the declared reason.
    expect(conformance.filter((t) => t.status === 'passed').length).toBeGreaterThan(10)
    expect(conformance.some((t) => t.status === 'passed' && t.fullName.includes('log.append.stale'))).toBe(true)
    const skipped = conformance.filter((t) => t.status !== 'passed')
    expect(skipped.length).toBeGreaterThan(0)
    for (const t of skipped)
      expect(t.fullName, 'every skip names its reason').toMatch(/skipped: (a Map in one process|no workers|nobody lists the sessions)/)
    expect(tests.filter((t) => t.fullName.includes('the installed @tanstack/ai-harness')).map((t) => t.status)).toEqual([
      'passed',
      'passed',
      'passed',
    ])
  })
})
