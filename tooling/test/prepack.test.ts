import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const PREPACK = join(repo, 'tooling', 'prepack.mjs')
const made: string[] = []
afterEach(async () => {
  for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true })
})

/** A library as ours are laid out (src/ built to dist/), with our prepack, outside the workspace. */
async function library(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ai-harness-prepack-'))
  made.push(dir)
  await mkdir(join(dir, 'src'))
  await writeFile(join(dir, 'src', 'index.ts'), 'export const answer = 42\n')
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({
      name: '@example/lib',
      version: '1.0.0',
      type: 'module',
      exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
      files: ['dist', 'src'],
      scripts: { prepack: `node ${JSON.stringify(PREPACK)}` },
    }),
  )
  return dir
}

async function build(dir: string): Promise<void> {
  await mkdir(join(dir, 'dist'), { recursive: true })
  await writeFile(join(dir, 'dist', 'index.js'), 'export const answer = 42\n')
  await writeFile(join(dir, 'dist', 'index.d.ts'), 'export declare const answer = 42\n')
}

/** `pnpm pack` as the consumer tests and `pnpm publish` run it; the tarballs it wrote. */
function pack(dir: string): Promise<{ ok: boolean; output: string; tarballs: string[] }> {
  const out = join(dir, 'out')
  // The pnpm running these tests leaves npm_* settings that would point pack at the workspace.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)))
  return new Promise((resolvePack) => {
    execFile('pnpm', ['pack', '--pack-destination', out], { cwd: dir, env, timeout: 60_000 }, async (error, stdout, stderr) => {
      const tarballs = await readdir(out).catch(() => [])
      resolvePack({ ok: !error, output: `${stdout}${stderr}`, tarballs })
    })
  })
}

describe('prepack: no tarball without its code', () => {
  it('refuses to pack an unbuilt library, naming the missing file and the command that builds it', async () => {
    const dir = await library()
    const packed = await pack(dir)
    expect(packed.ok).toBe(false)
    expect(packed.output).toContain('@example/lib: not packing, its build is missing: ./dist/index.d.ts')
    expect(packed.output).toContain('pnpm build')
    expect(packed.tarballs).toEqual([])
  })

  it('packs a built library, with its code', async () => {
    const dir = await library()
    await build(dir)
    const packed = await pack(dir)
    expect(packed.output).not.toContain('not packing')
    expect(packed.ok).toBe(true)
    expect(packed.tarballs).toEqual(['example-lib-1.0.0.tgz'])
  })

  it('refuses a library built without its declarations (what pnpm checkout builds)', async () => {
    const dir = await library()
    await build(dir)
    await rm(join(dir, 'dist', 'index.d.ts'))
    const packed = await pack(dir)
    expect(packed.ok).toBe(false)
    expect(packed.output).toContain('./dist/index.d.ts (named by "exports") does not exist')
  })

  it('refuses a library whose exports are built but another source file is not', async () => {
    const dir = await library()
    await build(dir)
    await writeFile(join(dir, 'src', 'more.ts'), 'export const more = 1\n')
    const packed = await pack(dir)
    expect(packed.ok).toBe(false)
    expect(packed.output).toContain('dist/more.js (built from src/more.ts) does not exist')
  })

  it('is the prepack of every published library of the workspace', async () => {
    const folders = [
      ...(await readdir(join(repo, 'packages'))).map((name) => join('packages', name)),
      ...(await readdir(join(repo, 'apps'))).map((name) => join('apps', name)),
      'conformance',
    ]
    const published: string[] = []
    for (const folder of folders) {
      const manifest = JSON.parse(await readFile(join(repo, folder, 'package.json'), 'utf8').catch(() => '{"private":true}'))
      if (manifest.private) continue
      published.push(manifest.name)
      expect(resolve(repo, folder, manifest.scripts?.prepack?.replace(/^node /, '') ?? ''), manifest.name).toBe(PREPACK)
    }
    expect(published).toHaveLength(7)
  })
})
