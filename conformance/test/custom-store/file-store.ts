/**
 * A store written from the READMEs alone, with nothing but `@tanstack/ai-harness/store`:
 * a folder per namespace (a file of JSON lines per log, one file for leases and wakeups), read and written with synchronous `fs` calls, as a store
 * on a synchronous driver (SQLite, LMDB) would be. Several processes share the file, so
 * the suite can race it for real; a lock directory makes each change a transaction. Its
 * waits (for that lock, for a slow disk) are timers, never a blocked thread: a store call
 * that blocks its process for long starves the process's other work (Node runs timers
 * that fall due meanwhile before it reads any socket, so a racer whose lock waiters keep
 * retrying never read the suite's next call).
 */
import { createHash } from 'node:crypto'
import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  type AppendOptions,
  assertLogId,
  checkListSessionsOptions,
  type Clock,
  compareCodePoints,
  DEFAULT_MAX_LOG_ID_BYTES,
  HarnessError,
  type HarnessStore,
  type Lease,
  LeaseHeldError,
  LeaseLostError,
  type LogEntry,
  LogConflictError,
  type LogRecord,
  MAX_TIME_MS,
  prepareAppend,
  type ReadOptions,
  type StoreLimits,
  systemClock,
  WAITING_FOR_PERSON,
  type Wakeup,
} from '@tanstack/ai-harness/store'

interface LeaseRow {
  owner: string
  fence: number
  expiresAt: number
  held: boolean
}

/** Leases and wakeups, one small file; Maps, so any id (even `__proto__`) is just a key. */
interface Meta {
  leases: Map<string, LeaseRow>
  wakeups: Map<string, number>
  /** The last fence handed out: fences grow across sessions and deletes. */
  fence: number
  /** Ids of the logs with records (log files are named by a hash): the session listing. */
  sessions: Set<string>
}

/** A log's committed size: readers read only this much of its file. */
interface Head {
  lines: number
  bytes: number
}

export interface FileStoreOptions {
  /** The namespace's folder; created when missing. */
  dir: string
  clock?: Clock
  limits?: Partial<StoreLimits>
  /**
   * Take the lock for every change (default true). Without it each change is still one
   * synchronous step in this process, but two processes interleave their read and write.
   */
  lock?: boolean
  /** A slow disk: ms spent between reading the file and writing it back (default 0). */
  writeDelayMs?: number
}

export const FILE_STORE_LIMITS: StoreLimits = {
  maxRecordBytes: 256 * 1024,
  maxBatchBytes: 1024 * 1024,
  maxLogIdBytes: DEFAULT_MAX_LOG_ID_BYTES,
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const pause = new Int32Array(new SharedArrayBuffer(4))
const sleepSync = (ms: number) => void Atomics.wait(pause, 0, 0, ms)
/** How long a change waits for the lock directory before it gives up (a holder that died leaves it behind). */
const LOCK_WAIT_MS = 20_000

export function fileStore(options: FileStoreOptions): HarnessStore & { dump(): string } {
  const limits: StoreLimits = { ...FILE_STORE_LIMITS, ...options.limits }
  const clock = options.clock ?? systemClock
  const dir = options.dir
  const lockDir = join(dir, 'lock')
  const metaFile = join(dir, 'meta.json')
  mkdirSync(dir, { recursive: true })

  // Each log is a file of JSON lines (the records' JSON text) and a head file that says
  // how much of it is committed; file names come from a hash, so any id fits.
  const logFile = (logId: string) => join(dir, `log-${createHash('sha256').update(logId).digest('hex')}`)
  const readText = (path: string) => {
    try {
      return readFileSync(path, 'utf8')
    } catch {
      return undefined
    }
  }
  const writeAtomically = (path: string, text: string) => {
    const temp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`
    writeFileSync(temp, text)
    renameSync(temp, path)
  }
  const headOf = (logId: string): Head => JSON.parse(readText(`${logFile(logId)}.head`) ?? '{"lines":0,"bytes":0}') as Head

  function loadMeta(): Meta {
    const raw = JSON.parse(readText(metaFile) ?? '{"leases":[],"wakeups":[],"fence":0,"sessions":[]}') as {
      leases: [string, LeaseRow][]
      wakeups: [string, number][]
      fence: number
      sessions: string[]
    }
    return { leases: new Map(raw.leases), wakeups: new Map(raw.wakeups), fence: raw.fence, sessions: new Set(raw.sessions) }
  }
  const saveMeta = (meta: Meta) =>
    writeAtomically(
      metaFile,
      JSON.stringify({ leases: [...meta.leases], wakeups: [...meta.wakeups], fence: meta.fence, sessions: [...meta.sessions] }),
    )
  /** A page of ids after `after`, in code point order, as the contract lists sessions. */
  const pageOf = (ids: Iterable<string>, options: Parameters<NonNullable<HarnessStore['sessions']>['list']>[0]) => {
    const { after, limit } = checkListSessionsOptions(options)
    return [...ids]
      .filter((id) => after === undefined || compareCodePoints(id, after) > 0)
      .sort(compareCodePoints)
      .slice(0, limit)
  }

  /** One transaction: lock, read, change, write, unlock. Throwing writes nothing. */
  async function locked<T>(fn: () => T | Promise<T>): Promise<T> {
    if (options.lock !== false) {
      const started = Date.now()
      for (;;) {
        try {
          mkdirSync(lockDir)
          break
        } catch (error) {
          if ((error as { code?: string }).code !== 'EEXIST' || Date.now() - started > LOCK_WAIT_MS) throw error
          await sleep(1)
        }
      }
    }
    try {
      return await fn()
    } finally {
      if (options.lock !== false) rmdirSync(lockDir)
    }
  }
  /**
   * The slow disk, between a read and its write. Locked, a timer; unlocked, a blocked
   * thread, so that two changes of one process never interleave (that store lacks only a
   * transaction across processes).
   */
  const slowDisk = (): Promise<void> | undefined => {
    if (!options.writeDelayMs) return undefined
    if (options.lock !== false) return sleep(options.writeDelayMs)
    sleepSync(options.writeDelayMs)
    return undefined
  }
  const changeMeta = <T>(fn: (meta: Meta) => T): Promise<T> =>
    locked(async () => {
      const meta = loadMeta()
      const slow = slowDisk()
      if (slow) await slow
      const result = fn(meta)
      saveMeta(meta)
      return result
    })

  const checkTime = (value: number, what: string) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIME_MS) {
      throw new HarnessError('INVALID_ARGUMENT', `${what} must be a time in ms between 0 and ${MAX_TIME_MS}, not ${String(value)}.`)
    }
  }

  const dueOf = (db: Meta, now: number, limit: number): Wakeup[] =>
    [...db.wakeups]
      .filter(([, at]) => at <= now)
      .map(([logId, at]) => ({ logId, at }))
      .sort((a, b) => a.at - b.at || (a.logId < b.logId ? -1 : a.logId > b.logId ? 1 : 0))
      .slice(0, Math.max(0, Math.floor(limit)))

  // Every method is `async`: a refusal is a rejected promise, never a synchronous throw.
  return {
    limits,
    async append(logId: string, expectedSeq: number, records: readonly LogRecord[], appendOptions?: AppendOptions) {
      const batch = prepareAppend(logId, expectedSeq, records, limits, appendOptions)
      if (batch.json.length === 0) return { nextSeq: expectedSeq }
      return locked(async () => {
        const lease = appendOptions?.lease
        if (lease) {
          const current = loadMeta().leases.get(logId)
          if (!(current?.held && current.owner === lease.owner && current.fence === lease.fence)) {
            throw new LeaseLostError(logId, 'is not the current lease, so the append was refused')
          }
        }
        const head = headOf(logId)
        const slow = slowDisk()
        if (slow) await slow
        if (head.lines + 1 !== expectedSeq) throw new LogConflictError(logId, expectedSeq, head.lines + 1)
        const file = logFile(logId)
        const text = batch.json.map((line) => `${line}\n`).join('')
        // Drop what a crashed append left past the committed head, then add the batch.
        writeFileSync(file, '', { flag: 'a' })
        truncateSync(file, head.bytes)
        appendFileSync(file, text)
        const next = { lines: head.lines + batch.json.length, bytes: head.bytes + Buffer.byteLength(text) }
        // Listed before the head commits the log: a crash between leaves an id with an empty log, never a log unlisted.
        if (expectedSeq === 1) {
          const meta = loadMeta()
          meta.sessions.add(logId)
          saveMeta(meta)
        }
        writeAtomically(`${file}.head`, JSON.stringify(next))
        return { nextSeq: next.lines + 1 }
      })
    },
    async read(logId: string, readOptions: ReadOptions = {}): Promise<LogEntry[]> {
      assertLogId(logId, limits)
      const head = headOf(logId)
      const after = Math.max(0, Math.floor(readOptions.after ?? 0))
      const end = readOptions.limit === undefined ? head.lines : Math.min(head.lines, after + Math.max(0, Math.floor(readOptions.limit)))
      if (end <= after) return []
      let bytes: Buffer
      try {
        bytes = readFileSync(logFile(logId))
      } catch {
        return [] // deleted since the head was read
      }
      const lines = bytes.subarray(0, head.bytes).toString('utf8').split('\n')
      const entries: LogEntry[] = []
      for (let i = after; i < end && i < lines.length - 1; i++) entries.push({ seq: i + 1, record: JSON.parse(lines[i]!) as LogRecord })
      return entries
    },
    async delete(logId: string) {
      assertLogId(logId, limits)
      await locked(() => {
        rmSync(`${logFile(logId)}.head`, { force: true })
        rmSync(logFile(logId), { force: true })
        const meta = loadMeta()
        meta.leases.delete(logId)
        meta.wakeups.delete(logId)
        meta.sessions.delete(logId)
        saveMeta(meta)
      })
    },
    sessions: {
      async list(listOptions) {
        return pageOf(loadMeta().sessions, listOptions)
      },
      async waiting(listOptions) {
        const ids = [...loadMeta().wakeups].filter(([, at]) => at === WAITING_FOR_PERSON).map(([logId]) => logId)
        return pageOf(ids, listOptions)
      },
    },
    leases: {
      async acquire(logId: string, owner: string, ttlMs: number): Promise<Lease> {
        assertLogId(logId, limits)
        return changeMeta((db) => {
          const now = clock.now()
          const current = db.leases.get(logId)
          if (current?.held && now < current.expiresAt && current.owner !== owner) throw new LeaseHeldError(logId, current.expiresAt)
          const row = { owner, fence: ++db.fence, expiresAt: now + ttlMs, held: true }
          db.leases.set(logId, row)
          return { logId, owner, fence: row.fence, expiresAt: row.expiresAt }
        })
      },
      async renew(lease: Lease, ttlMs: number): Promise<Lease> {
        return changeMeta((db) => {
          const now = clock.now()
          const current = db.leases.get(lease.logId)
          if (!(current?.held && current.owner === lease.owner && current.fence === lease.fence && now < current.expiresAt)) {
            throw new LeaseLostError(lease.logId)
          }
          current.expiresAt = now + ttlMs
          return { ...lease, expiresAt: current.expiresAt }
        })
      },
      async release(lease: Lease): Promise<void> {
        await changeMeta((db) => {
          const current = db.leases.get(lease.logId)
          if (!(current?.held && current.owner === lease.owner && current.fence === lease.fence)) {
            throw new LeaseLostError(lease.logId, 'is no longer held by this owner, so it was not released')
          }
          current.held = false
        })
      },
    },
    wakeups: {
      async schedule(logId: string, at: number) {
        assertLogId(logId, limits)
        checkTime(at, 'A wakeup time')
        await changeMeta((db) => void db.wakeups.set(logId, at))
      },
      async cancel(logId: string) {
        assertLogId(logId, limits)
        await changeMeta((db) => void db.wakeups.delete(logId))
      },
      async due(limit: number) {
        return dueOf(loadMeta(), clock.now(), limit)
      },
      async claim(limit: number, holdMs: number) {
        return changeMeta((db) => {
          const now = clock.now()
          const taken = dueOf(db, now, limit)
          for (const wakeup of taken) db.wakeups.set(wakeup.logId, now + holdMs)
          return taken
        })
      },
    },
    /** Every file of the namespace, as text. */
    dump: () =>
      readdirSync(dir)
        .sort()
        .map((name) => `${name}\n${readText(join(dir, name)) ?? ''}`)
        .join('\n'),
  }
}
