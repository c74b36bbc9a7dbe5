import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Harness } from '@tanstack/ai-harness'

/**
 * The app's harnesses from a module: its `harnesses` export (a harness or an array), or its
 * default export (the same, or a function that returns them). With them the inspector's
 * host knows the app's rules (secretNames, resolveSecret, tool descriptions) and checks
 * answers and approvals as the app's own host does.
 */
export async function loadHarnesses(path: string): Promise<Harness[]> {
  const module = (await import(pathToFileURL(resolve(path)).href)) as { harnesses?: unknown; default?: unknown }
  let found = module.harnesses ?? module.default
  if (typeof found === 'function') found = await (found as () => unknown)()
  const list = [found].flat()
  if (
    list.length === 0 ||
    list.some((h) => typeof h !== 'object' || h === null || typeof (h as Harness).name !== 'string' || !Array.isArray((h as Harness).tools))
  ) {
    throw new Error(
      `${path} exports no harnesses: export const harnesses = [defineHarness(...)] (or a default export, or a function that returns them).`,
    )
  }
  return list as Harness[]
}
