import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

const read = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), 'utf8')

it("the root README's custom-store example is this package's conformance test, word for word", () => {
  const readme = read('../../../README.md')
  const section = readme.slice(readme.indexOf('## Write a store of your own'))
  const block = section.match(/```ts\n([\s\S]*?)```/)?.[1]
  expect(block, 'the README has a ts block in that section').toBeDefined()
  expect(block).toBe(read('./conformance.test.ts'))
})
