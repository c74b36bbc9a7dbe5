import { mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
/** Inside this package, so a bundle that leaves packages external resolves them from its node_modules. */
export const OUT_DIR = join(root, 'dist')

/**
 * The flow for Bun and Deno: our files only, every package left to the runtime to resolve
 * from node_modules (they load the libraries' built dist as an app does).
 */
export async function bundleCli(): Promise<string> {
  mkdirSync(OUT_DIR, { recursive: true })
  const cli = join(OUT_DIR, 'cli.js')
  await build({
    entryPoints: [join(root, 'src/cli.ts')],
    outfile: cli,
    bundle: true,
    packages: 'external',
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    logLevel: 'error',
  })
  return cli
}

/**
 * The flow as a Worker: everything in one module, as wrangler bundles one (esbuild with the
 * `workerd`, `worker` and `browser` conditions), so the AWS SDK comes in its fetch build. A
 * `node:` import anywhere in what it reaches fails this build.
 */
export async function bundleWorker(): Promise<string> {
  mkdirSync(OUT_DIR, { recursive: true })
  const worker = join(OUT_DIR, 'worker.js')
  await build({
    entryPoints: [join(root, 'src/worker.ts')],
    outfile: worker,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'silent',
  })
  return worker
}
