import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FlowConfig } from '../src/stores.js'
import { bundleCli, bundleWorker, OUT_DIR } from './bundle.js'
import { workerdConfig } from './workerd-config.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).dependencies as Record<string, string>

/** Where a runtime stands here: its version, or why it cannot run. */
export type Availability = { readonly ok: true; readonly version: string } | { readonly ok: false; readonly why: string }

/** A runtime under test: its binary (from npm, pinned in package.json) and how it runs the flow. */
export interface Runtime {
  readonly name: 'bun' | 'deno' | 'workerd'
  readonly pinned: string
  /** The version the binary reports, as the pin spells it. */
  readonly version: () => Availability
  readonly command: string
  /** Builds what the runtime loads (once); its path. */
  readonly prepare: () => Promise<string>
  readonly args: (config: FlowConfig, bundle: string) => string[]
}

/** Runs `build` once, on first use. */
const once = (build: () => Promise<string>) => {
  let built: Promise<string> | undefined
  return () => {
    built ??= build()
    return built
  }
}
const cliBundle = once(bundleCli)

const bin = (name: string) => join(root, 'node_modules', '.bin', name)

/** The binary's version (first match of `pattern` in its --version output), or why it would not answer. */
function versionOf(name: string, pattern: RegExp): Availability {
  try {
    const out = execFileSync(bin(name), ['--version'], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'pipe'] })
    const version = pattern.exec(out)?.[1]
    return version ? { ok: true, version } : { ok: false, why: `${name} --version printed ${JSON.stringify(out.slice(0, 200))}` }
  } catch (error) {
    return { ok: false, why: `${name} does not run here: ${String((error as Error).message).split('\n')[0]}` }
  }
}

/** workerd's --version is its date; the npm version is 1.YYYYMMDD.patch. */
const workerdVersion = (): Availability => {
  const found = versionOf('workerd', /workerd (\d{4}-\d{2}-\d{2})/)
  return found.ok ? { ok: true, version: `1.${found.version.replaceAll('-', '')}` } : found
}

/** A compatibility date well before the pinned workerd's, with no flags: what an older Worker project has. */
export const WORKERD_COMPATIBILITY_DATE = '2025-01-01'

export const RUNTIMES: readonly Runtime[] = [
  {
    name: 'bun',
    pinned: pinned.bun ?? '',
    version: () => versionOf('bun', /^(\d+\.\d+\.\d+)/),
    command: bin('bun'),
    prepare: cliBundle,
    args: (config, cli) => [cli, JSON.stringify(config)],
  },
  {
    name: 'deno',
    pinned: pinned.deno ?? '',
    version: () => versionOf('deno', /^deno (\d+\.\d+\.\d+)/),
    command: bin('deno'),
    prepare: cliBundle,
    // Reads node_modules and the environment (the AWS SDK looks there), talks to loopback only.
    args: (config, cli) => [
      'run',
      '--no-lock',
      '--no-prompt',
      '--allow-read',
      '--allow-env',
      // The AWS SDK puts the OS release in its user agent.
      '--allow-sys=osRelease',
      '--allow-net=127.0.0.1',
      cli,
      JSON.stringify(config),
    ],
  },
  {
    name: 'workerd',
    pinned: (pinned.workerd ?? '').replace(/\.\d+$/, ''),
    version: workerdVersion,
    command: bin('workerd'),
    prepare: once(bundleWorker),
    args: (config, worker) => {
      const file = join(OUT_DIR, `workerd-${config.store}.capnp`)
      // The module is embedded by a path relative to the config, which sits beside it.
      writeFileSync(file, workerdConfig(basename(worker), config, WORKERD_COMPATIBILITY_DATE))
      return ['test', file]
    },
  },
]
