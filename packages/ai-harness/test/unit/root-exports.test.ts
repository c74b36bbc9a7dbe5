import { readFileSync } from 'node:fs'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/** The names `src/index.ts` exports, types included (what a user of the root entry sees). */
function rootExportNames(): string[] {
  const path = new URL('../../src/index.ts', import.meta.url)
  const file = ts.createSourceFile('index.ts', readFileSync(path, 'utf8'), ts.ScriptTarget.Latest)
  const names: string[] = []
  file.forEachChild((node) => {
    if (ts.isExportDeclaration(node)) {
      // `export * from` would hide how many names the root has: it is not allowed either.
      if (!node.exportClause || !ts.isNamedExports(node.exportClause)) names.push('*')
      else for (const element of node.exportClause.elements) names.push(element.name.text)
    } else if (ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      names.push((node as { name?: ts.Identifier }).name?.text ?? '?')
    }
  })
  return names
}

describe('the root entry (issue 26): the user API only', () => {
  it('exports at most 30 names, each once, and no star export; the fold, views and records are in /log', () => {
    const names = rootExportNames()
    expect(names).not.toContain('*')
    expect(new Set(names).size).toBe(names.length)
    expect(names.length).toBeLessThanOrEqual(30)
    for (const inside of ['foldLog', 'cutAtResume', 'statusOf', 'jsonCopy', 'SecretScanner', 'CallStop', 'RunStop']) {
      expect(names).not.toContain(inside)
    }
  })
})
