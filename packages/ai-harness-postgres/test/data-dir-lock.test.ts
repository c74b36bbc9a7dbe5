/**
 * The PGlite folder lock: a folder a live process holds is refused to every other process
 * with STORE_LOCKED, naming the folder and the holder's pid; a folder whose holder died is
 * taken over; in one process the app and its stores share the hold.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { DATA_DIR_LOCK_FILE, DataDirLockedError, lockDataDir } from '../src/index.js'
import { LineChild } from './line-child.js'

const folders: string[] = []
const children: LineChild[] = []
afterEach(() => {
  for (const child of children.splice(0)) child.proc.kill('SIGKILL')
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})
const folder = () => {
  const dir = mkdtempSync(join(tmpdir(), 'lock-'))
  folders.push(dir)
  return dir
}

it('refuses a folder that another live process holds, naming the folder and its pid; takes it over once that process is killed', async () => {
  const dir = folder()
  const holder = new LineChild('data-dir-lock-child.ts', [dir], 'the lock holder')
  children.push(holder)
  await holder.ready
  let refused: unknown
  try {
    lockDataDir(dir)
  } catch (error) {
    refused = error
  }
  expect(refused).toBeInstanceOf(DataDirLockedError)
  expect(refused).toMatchObject({ code: 'STORE_LOCKED', dataDir: dir, pid: holder.proc.pid })
  expect(String((refused as Error).message)).toContain(dir)
  expect(String((refused as Error).message)).toContain(String(holder.proc.pid))

  holder.proc.kill('SIGKILL')
  await holder.exited
  const lock = lockDataDir(dir) // the dead pid's lock is taken over
  expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(true)
  lock.release()
  expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(false)
}, 60_000)

it('in one process, every holder shares the folder; the file goes when the last one lets go', () => {
  const dir = folder()
  const app = lockDataDir(dir)
  const store = lockDataDir(dir)
  app.release()
  expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(true)
  store.release()
  store.release() // twice is fine
  expect(existsSync(join(dir, DATA_DIR_LOCK_FILE))).toBe(false)
})
