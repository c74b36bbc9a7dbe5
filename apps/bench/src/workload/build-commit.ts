import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The repository root, from `apps/bench/{src,dist}/workload/`. */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))

/** The packages a plain step runs through: the core and the memory store. */
const PACKAGES = ['packages/ai-harness', 'packages/ai-harness-memory'] as const

/** The core and the memory store of one commit, built under a temp folder, and how to drop them. */
export interface BuiltCommit {
  readonly commit: string
  /** The commit's `@tanstack/ai-harness` (root), `/testing`, and `@tanstack/ai-harness-memory`, as file URLs to import. */
  readonly core: string
  readonly testing: string
  readonly memory: string
  remove(): Promise<void>
}

/**
 * Builds the core and the memory store of `commit` under a temp folder: `git archive` of
 * the two packages (no worktree: the repository is left as it is), their dependencies
 * linked from the workspace's (a check that they did not change is the caller's), the
 * store linked to that commit's core, and each package transpiled as `build:js` does.
 */
export async function buildCommit(commit: string): Promise<BuiltCommit> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-commit-'))
  const remove = () => rm(dir, { recursive: true, force: true })
  try {
    const { stdout } = await run('git', ['-C', ROOT, 'rev-parse', '--verify', `${commit}^{commit}`])
    const archive = path.join(dir, 'src.tar')
    await run('git', ['-C', ROOT, 'archive', '--format=tar', '-o', archive, commit, 'tsconfig.base.json', ...PACKAGES])
    await run('tar', ['-xf', archive, '-C', dir])
    const at = (pkg: string) => path.join(dir, pkg)
    await symlink(path.join(ROOT, 'packages/ai-harness/node_modules'), path.join(at(PACKAGES[0]), 'node_modules'), 'dir')
    await mkdir(path.join(at(PACKAGES[1]), 'node_modules/@tanstack'), { recursive: true })
    await symlink(at(PACKAGES[0]), path.join(at(PACKAGES[1]), 'node_modules/@tanstack/ai-harness'), 'dir')
    for (const pkg of PACKAGES) await run(process.execPath, [path.join(ROOT, 'tooling/transpile.mjs')], { cwd: at(pkg) })
    const url = (pkg: string, file: string) => pathToFileURL(path.join(at(pkg), 'dist', file)).href
    return {
      commit: stdout.trim(),
      core: url(PACKAGES[0], 'index.js'),
      testing: url(PACKAGES[0], 'testing/index.js'),
      memory: url(PACKAGES[1], 'index.js'),
      remove,
    }
  } catch (error) {
    await remove()
    throw error
  }
}

/** The files of the two packages that name their dependencies: a build of another commit links the workspace's only when these match. */
export async function dependenciesDiffer(commit: string): Promise<string[]> {
  const files = PACKAGES.map((pkg) => `${pkg}/package.json`)
  const { stdout } = await run('git', ['-C', ROOT, 'diff', '--name-only', commit, '--', ...files])
  return stdout.split('\n').filter((line) => line !== '')
}

/** The commit the workspace's build is of (`HEAD`), and whether its tree has changes of its own. */
export async function workspaceCommit(): Promise<string> {
  const { stdout } = await run('git', ['-C', ROOT, 'rev-parse', 'HEAD'])
  const { stdout: status } = await run('git', ['-C', ROOT, 'status', '--porcelain', '--', ...PACKAGES])
  return `${stdout.trim()}${status.trim() === '' ? '' : ' (with uncommitted changes)'}`
}
