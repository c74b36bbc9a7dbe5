/**
 * What an app must hold one copy of is a peer of every library, never a dependency: a
 * dependency would put a second copy beside the app's (two zods in one bundle, two
 * `@tanstack/ai` type worlds). Each library that imports zod in its source declares it as a peer.
 */
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { sourceFiles } from '../checks/source-files.mjs'
import { LIBRARIES } from './libraries.js'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const SHARED = ['zod', '@tanstack/ai', '@tanstack/ai-harness']

describe.each(LIBRARIES)('%s', (dir) => {
  const manifest = JSON.parse(readFileSync(join(repo, dir, 'package.json'), 'utf8'))

  it(`takes ${SHARED.join(', ')} as peers, never as dependencies`, () => {
    for (const name of SHARED) expect(manifest.dependencies?.[name], name).toBeUndefined()
  })

  it('declares zod as a peer when its source imports zod', () => {
    const importsZod = sourceFiles(repo, [`${dir}/src`]).some((file) => /from 'zod'/.test(readFileSync(file, 'utf8')))
    if (importsZod) expect(manifest.peerDependencies?.zod).toMatch(/^\^4\./)
    else expect(manifest.peerDependencies?.zod).toBeUndefined()
  })
})
