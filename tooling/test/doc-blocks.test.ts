import { describe, expect, it } from 'vitest'
import { codeBlocks, codeGroups, parseInfo, ungroupedBlocks } from '../doc-blocks/src/index.js'

const page = [
  '# A page',
  '```ts group=a',
  'export const one = 1',
  '```',
  'Text.',
  '```sh',
  'npm install x',
  '```',
  '```ts group=b norun="needs a real bucket"',
  'export const two = 2',
  '```',
  '```ts group=a',
  'export const three = one + 2',
  '```',
  '```ts group=c vitest',
  "it('x', () => {})",
  '```',
  '```ts',
  'const loose = true',
  '```',
  '',
].join('\n')

describe('code blocks of a markdown page', () => {
  it('reads the language and the attributes of a fence, quoted or not', () => {
    expect(parseInfo('ts group=a norun="needs a real bucket" vitest')).toEqual({
      lang: 'ts',
      attrs: { group: 'a', norun: 'needs a real bucket', vitest: '' },
    })
    expect(parseInfo('')).toEqual({ lang: '', attrs: {} })
  })

  it('joins the blocks of a group in page order, unchanged', () => {
    expect(codeBlocks(page, 'a')).toEqual(['export const one = 1\n', 'export const three = one + 2\n'])
    const groups = codeGroups(page)
    expect(groups.map((g) => g.name)).toEqual(['a', 'b', 'c'])
    expect(groups[0]!.source).toBe('export const one = 1\n\nexport const three = one + 2\n')
  })

  it('marks a group that does not run, with its reason, and a group that is a vitest file', () => {
    const [a, b, c] = codeGroups(page)
    expect([a!.norun, b!.norun, c!.norun]).toEqual([undefined, 'needs a real bucket', undefined])
    expect([a!.vitest, b!.vitest, c!.vitest]).toEqual([false, false, true])
  })

  it('finds ts blocks outside any group, with their line, and ignores other languages', () => {
    expect(ungroupedBlocks(page).map((b) => [b.line, b.code])).toEqual([[18, 'const loose = true\n']])
  })
})
