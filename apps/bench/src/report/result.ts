import type { BenchConfig } from '../config.js'
import type { MachineInfo } from '../machine.js'
import type { StoreName } from '../targets/target.js'

/** A timing summary in milliseconds. */
export interface Timing {
  medianMs: number
  p90Ms: number
  samples: number
}

/** Section 1: one store's step, against a bare conditional write of the same bytes. */
export interface StepCostRow {
  store: StoreName
  step: Timing
  bareWrite: Timing
  /** step median / bare write median. */
  ratio: number | null
  commit: { records: number; bytes: number; store: Timing; bareWrite: Timing; ratio: number | null; requests: number }
  /** Client requests per `step.do`, counted. */
  requestsPerStep: { median: number; max: number; reads: number }
  /** Store calls per `step.do` (append, read), counted on a wrapped store. */
  storeCallsPerStep: { append: number; read: number }
  /** Requests of `host.open` on a new session (lease, read) and of one whole turn. */
  requestsPerOpen: number
  requestsPerTurn: number
  requestNames: Record<string, number>
}

/** Section 2: opening a session of `records` records in a fresh process. */
export interface RecoveryRow {
  store: StoreName
  records: number
  /** `host.open` (lease, read of the whole log, fold): first open, then the median of the repeats. */
  openFirstMs: number
  open: Timing
  /** The same bytes read through the same client and parsed: the baseline. */
  bareRead: Timing
  ratio: number | null
  /** Peak RSS of the process during the first open, above its RSS before it. */
  peakRssGrowthMB: number
  /** Heap still held after the open (the folded session), after GC. */
  retainedHeapMB: number
  bytesPerRecordPeak: number
  requestsPerOpen: number
}

/** Section 3: steps per second with `sessions` sessions at once. */
export interface ThroughputRow {
  store: StoreName
  sessions: number
  steps: number
  stepsPerSecond: number
  bareWritesPerSecond: number
  /** ours / bare: the share of the bare write rate that durable steps reach (median of the repeats' paired ratios). */
  ratio: number | null
  /** The lowest and highest paired ratio of the repeats. */
  ratioSpread: [number, number]
  /** Process CPU (user + system, µs) per step while the steps ran, and per bare write in the baseline. */
  cpuMicrosPerStep: number
  bareCpuMicrosPerWrite: number
  /** The harness's own CPU per step: the two above subtracted (the store's client work is in both). */
  harnessCpuMicrosPerStep: number
}

/** Section 5: several host processes against one PostgreSQL. */
export interface HostsRow {
  processes: number
  sessionsPerProcess: number
  steps: number
  stepsPerSecond: number
  bareWritesPerSecond: number
  ratio: number | null
  /** All processes' CPU (user + system, µs) per step while the steps ran. */
  cpuMicrosPerStep: number
}

/** Section 4: a memoized step on the same PostgreSQL, ours and the peers. */
export interface PeerRow {
  name: 'ai-harness step.do' | 'DBOS step' | 'LangGraph checkpoint put'
  status: 'ok' | 'blocked'
  /** Why it could not run here, verbatim. */
  error?: string
  step?: Timing
  /** This / ours (above 1: ours is faster). */
  ratioToOurs: number | null
  requestsPerStep?: number
  what: string
}

export interface BenchResult {
  version: 1
  mode: BenchConfig['mode']
  runId: string
  startedAt: string
  durationMs: number
  machine: MachineInfo
  config: BenchConfig
  stepCost: StepCostRow[]
  recovery: RecoveryRow[]
  growth: GrowthRow[]
  throughput: ThroughputRow[]
  hosts: HostsRow[]
  peers: PeerRow[]
  /** Section 6, recovery latency; absent in results written before it existed. */
  takeover?: TakeoverRow[]
  /** Section 7, resumable streams; absent in results written before it existed. */
  streams?: StreamsRow[]
  /** Section 8, a plain step on this build and on the commit before issue #31; absent when it did not run. */
  plainStep?: PlainStepResult
  /** Sections or stores that failed, with the error; a run reports them rather than stopping. */
  failures: Array<{ section: string; store?: string; error: string }>
}

/** Section 6: from SIGKILL of the driving process to the first step of the resumed turn in another process. */
export interface TakeoverRow {
  store: StoreName
  /**
   * A worker process already up when the driver died, or the killed process's slot started again after it;
   * or `graceful stop`: the driver got SIGTERM and called `host.shutdown()`, a running worker took over (the time is from the signal).
   */
  scenario: 'running worker' | 'restarted slot' | 'graceful stop'
  afterKillMs: number
  /** Graceful stop: each trial's time (afterKillMs is their median). */
  trialsMs?: number[]
  /** Restarted slot: the part after its store was open (its own start left out). */
  afterReadyMs: number | null
  /** The default lease on this store: what a takeover waited before liveness, and still waits on DynamoDB and S3. */
  leaseMs: number
  /** afterKillMs / leaseMs. */
  ofLease: number | null
  /** What it should stay under: 1 s where the store proves the dead host dead, else one lease. */
  goalMs: number
  /** Restarted slot: where its time went, each mark of the new process (its start, modules, store, first store calls) as ms after the kill. */
  phases?: TakeoverPhase[]
  /**
   * Restarted slot on PGlite: a bare process started on the same folder after the same kind of kill
   * (`new PGlite(dir)` and one query, nothing of ours), from its spawn to the query's answer, and its marks.
   */
  bare?: { startMs: number; phases: TakeoverPhase[]; oursFromSpawnMs: number; ratio: number | null }
}

/** One mark of a takeover process: what it had just done, ms after the kill. */
export interface TakeoverPhase {
  phase: string
  ms: number
}

/** Section 2, derived: how time and memory grow from one size to the next. */
export interface GrowthRow {
  store: StoreName
  from: number
  to: number
  /** time(to) / time(from); linear growth gives to / from. */
  timeFactor: number | null
  memoryFactor: number | null
  recordsFactor: number
}

/** Section 7: resumable streams (`@tanstack/ai-harness/streams`) on the store. */
export interface StreamsRow {
  store: StoreName
  /** Chunks per timed append. */
  batch: number
  /** One append of `batch` chunks to a run's stream, and one bare conditional write of the same bytes. */
  append: Timing
  bareWrite: Timing
  /** append median / bare write median (goal ≤ 1.2). */
  ratio: number | null
  /** Streams at once in the lag and rate parts. */
  streams: number
  /** From a producer's append call to a reader's receipt of the chunk, the reader on another store instance. */
  lagP50Ms: number
  lagP99Ms: number
  lagSamples: number
  /** Chunks appended per second by `streams` producers at once (batches of 8), and the bare writes of the same bytes. */
  chunksPerSecond: number
  bareChunksPerSecond: number
  /** ours / bare. */
  rateRatio: number | null
}

/** Section 8: a plain `step.do` (no verify, once or undo) on one build of the core and memory store. */
export interface PlainBuildRow {
  /** `baseline`: a commit given with `--baseline`. */
  build: 'this build' | 'before #31' | 'baseline'
  commit: string
  /** Each `step.do`, timed from inside the tool. */
  step: Timing
  /** The distinct values over every step (one value: every step the same): appends while it ran, records per append, bytes appended. */
  appendsPerStep: number[]
  recordsPerAppend: number[]
  bytesPerStep: number[]
}

/** Section 8: this build's plain step against the same step on the commit before issue #31, in the same run. */
export interface PlainStepResult {
  store: 'memory'
  builds: PlainBuildRow[]
  /** This build's median / the earlier build's median (1: the same cost). */
  ratio: number | null
  /** The same ratio round by round (the sides alternate which goes first): its median and lowest–highest. */
  roundRatio: { median: number; spread: [number, number] }
  /** True when both builds made the same appends per step, of the same records and bytes. */
  sameWrites: boolean
}
