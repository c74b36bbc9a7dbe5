import { cp, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'

/**
 * A fresh PGlite runs initdb in WASM, 2–3 seconds here; reopening a folder takes about
 * 0.2 s. So the first run makes an empty database once, under `.data/` (ignored by
 * git), and every run copies it. Named for the pinned PGlite version, whose on-disk
 * format it is.
 */
const TEMPLATE = fileURLToPath(new URL('../../.data/pglite-0.5.17-empty/', import.meta.url))

/** A new, empty PGlite data folder of this run, in the system's temp folder. */
export async function freshPGliteDir(runId: string): Promise<string> {
  if (!(await exists(TEMPLATE))) await makeTemplate()
  const dir = await mkdtemp(path.join(tmpdir(), `bench-pglite-${runId}-`))
  await cp(TEMPLATE, dir, { recursive: true })
  return dir
}

async function makeTemplate(): Promise<void> {
  // Built aside and renamed into place, so two runs at once never see half a template.
  const building = `${TEMPLATE.replace(/\/$/, '')}.${process.pid}.tmp`
  await mkdir(path.dirname(building), { recursive: true })
  const db = await PGlite.create(building)
  await db.close()
  try {
    await rename(building, TEMPLATE)
  } catch {
    await rm(building, { recursive: true, force: true })
  }
}

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  )
