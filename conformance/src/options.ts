import type { Clock, HarnessStore, StoreLimits, StoreRetryOptions } from '@tanstack/ai-harness/store'
import type { StreamsHook } from './streams/streams-hook.js'

/**
 * What a store may leave out. Each needs a reason; an undeclared gap fails.
 *
 * - `leases`, `wakeups`: the store has no `leases` / `wakeups`.
 * - `dump`: no `dump` option, so the no-trace checks cannot run.
 * - `races`: instances of the store cannot run at once (one connection for everything).
 * - `fencing`: `append` ignores its `lease` option (see `AppendOptions` in the core).
 * - `sessions`: the store has no `sessions` (no listing of sessions; see `SessionListStore`).
 * - `orphans`: the store has no `leases.orphans`: it cannot prove a lease's holder dead, so
 *   leases end by expiry or release only (see `LeaseStore.orphans`).
 * - `watch`: the store has no `wakeups.watch`: it cannot tell other processes that a wakeup
 *   became due, so a worker finds it at its next poll (see `WakeupStore.watch`).
 */
export const SKIP_KEYS = ['leases', 'wakeups', 'dump', 'races', 'fencing', 'sessions', 'orphans', 'watch'] as const
export type SkipKey = (typeof SKIP_KEYS)[number]

export interface StoreContext {
  /**
   * Unique per case (and per extra namespace a case opens): put every table, key or prefix
   * of the case under it. It is short and plain, `c` then letters, digits and `_` (at most
   * 44 characters), e.g. `c1a2b3c4d5e6f_log_read_paging`, so it fits a schema, table or
   * key name as it is. Two namespaces never share data.
   */
  readonly namespace: string
  /** The case's clock. Leases and wakeups must read time from it. */
  readonly clock: Clock
  /**
   * Only in the store's retry cases (`store.retry.*`, with `faults: true`): pass it as the
   * store's `retry` option, the suite's backoff, recorded instead of slept.
   */
  readonly retry?: StoreRetryOptions
  /**
   * Only in the store's retry cases (with `faults: true`): wrap the client of the store you
   * build, and nothing else, so its append writes fail on cue (see {@link ClientFaults}).
   * The retry cases then prove the very store `createStore` ships.
   */
  readonly faults?: ClientFaults
}

/**
 * What the client of a faulty store does to one request that writes an append's batch:
 * `'fail'`: the request is not sent, and fails with the database's own transient error
 * (throttling, a 5xx, a serialization failure); `'lose-reply'`: the request is sent and
 * lands, then fails as a reset connection does, so the store cannot know it landed.
 */
export type WriteFault = 'fail' | 'lose-reply'

/** What the client of a store in the retry cases does: ask before each write of an append's batch, report what it made up. */
export interface ClientFaults {
  /**
   * Ask it before each request that writes an append's batch (each try of the write):
   * what to do to that request, or `undefined` to send it as it is.
   */
  readonly onAppendWrite: () => WriteFault | undefined
  /** Tell it each error the client makes up, so the suite can find it as the cause of the store's error. */
  readonly injected: (error: unknown) => void
}

/**
 * The context of a store in the retry cases: the case's namespace and clock, the
 * `retry` option to pass, and the faults its client makes (what `appendWriteFault` takes).
 */
export interface FaultyStoreContext extends StoreContext, ClientFaults {
  readonly retry: StoreRetryOptions
}

/** A module that every racing process imports; see {@link ConformanceOptions.processes}. */
export interface ProcessesOption {
  /**
   * The module's URL or absolute path, e.g. `new URL('./my-store-factory.ts', import.meta.url)`.
   * It exports `createStore(context)` (or a default export), the same function as the
   * `createStore` option, for a store that reaches the same data from another process.
   * It may also export `streams` (a `StreamsHook`, as the `streams` option): the racers run
   * the other side of `stream.sse.resume` (TanStack's resume) and `lock.exclusive` (their own
   * locks) with it, and with the core's `harnessStreams`/`harnessLocks` when it exports none.
   */
  module: URL | string
  /**
   * `'process'` (default): each racer is a child process (`child_process.fork`): its own
   * event loop, heap and connections. `'thread'`: a worker thread, cheaper to start, but it
   * shares the process (use it only for stores whose instances share nothing in memory), and on
   * Node 20 it needs a JavaScript module: worker threads run no `--import` loader.
   */
  kind?: 'process' | 'thread'
  /**
   * How many racers to start (default: `concurrency`, at most 4). The race writers are spread
   * over them in turn, so with fewer racers than writers each racer runs several, which also
   * interleave at every `await` as they would in one process.
   */
  count?: number
  /**
   * Node options of each racer. Default: none for a `.js`/`.mjs` module; for a `.ts`
   * module, `--import` of `tsx` resolved from the module's own folder (add `tsx` to its
   * package's devDependencies, or pass your own loader here, or point at compiled JS).
   */
  execArgv?: string[]
}

export interface ConformanceOptions {
  /** Shown in test names, e.g. 'postgres (pg)'. */
  name: string
  /**
   * Opens the store for a namespace. Called several times for one namespace, by cases
   * that use several instances and by the race cases: each call must behave as an
   * independent process with its own connection (and its own caches), on the same data.
   */
  createStore: (context: StoreContext) => HarnessStore | Promise<HarnessStore>
  /**
   * Every byte the store keeps for the namespace (rows, items, objects), as text: a
   * `Uint8Array` is searched as UTF-8 and as Latin-1. The suite searches it to prove that
   * refused data left no trace.
   */
  dump?: (context: { namespace: string }) => Promise<string | Uint8Array>
  /**
   * Called after each case for each namespace the case used (e.g. to drop its tables),
   * after every store instance of the case has been closed.
   */
  cleanup?: (context: { namespace: string }) => Promise<void>
  /**
   * The limits the store declares. When given, the store's own `limits` must equal
   * them. Default: the store's `limits`. They must be at least `MIN_STORE_LIMITS`.
   */
  limits?: StoreLimits
  /** Capabilities the store leaves out, each with the reason: `{ leases: 'no row locks' }`. */
  skip?: Partial<Record<SkipKey, string>>
  /** Writers in the race cases: at least 2. Default 8. */
  concurrency?: number
  /**
   * Runs the writers of the race cases in separate OS processes (or worker threads), so
   * they really race, also on a store whose driver is synchronous (every call of one
   * process then runs to its end before the next: only another process can interleave).
   * Without it the writers are instances in this process, interleaving at each `await`.
   * Needs a store whose data other processes reach (a database server or a file), not an
   * in-memory store.
   */
  processes?: ProcessesOption
  /**
   * `true` when `createStore` honours `context.faults` and `context.retry` (it wraps its
   * client so the writes of an append fail on cue, and passes `retry` on): with it, the
   * cases of the store's retries (`store.retry.*`) run, on the store `createStore` builds.
   * A store that talks to its database through a client gives it.
   */
  faults?: boolean
  /**
   * How the `stream.*` and `lock.*` cases build TanStack AI streams and locks on the store.
   * Default: the core's `harnessStreams` and `harnessLocks` (`@tanstack/ai-harness/streams`).
   */
  streams?: StreamsHook
  /** Per-case timeout in ms for vitest. Default 60 000. */
  timeoutMs?: number
  /**
   * Only these cases, by id (default: every case). For a second run of a few cases with
   * other options, e.g. the stream and lock cases with `processes` while the whole suite runs
   * in one process.
   */
  cases?: readonly string[]
}

/**
 * What a store's tests do with one namespace's data, in the shape of the suite's options
 * (spread it into them): `dump` every byte of it, `cleanup` remove it. Each store's tests
 * have one, used by the conformance run and by their own tests alike.
 */
export type NamespaceData = Required<Pick<ConformanceOptions, 'dump' | 'cleanup'>>
