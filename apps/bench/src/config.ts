/** How much work each section does. The default run fits in 5 minutes on 2 cores; quick in 30 seconds. */
export interface BenchConfig {
  mode: 'default' | 'quick'
  /** Step cost: rounds (the first is a warm-up and is dropped), tool calls per round, steps per call. */
  stepRounds: number
  toolCallsPerRound: number
  stepsPerCall: number
  /**
   * Recovery: log sizes in records, and for each size the warm opens timed after the
   * first (cold) one. Fewer at 100k: an open there takes seconds (see the README).
   */
  recoverySizes: number[]
  recoveryRepeats: number[]
  /** Throughput: concurrent sessions, steps per session, repeats. */
  concurrency: number[]
  throughputSteps: number
  throughputRepeats: number
  /** Multi-host (PostgreSQL): host processes, sessions per process, repeats. */
  hostProcesses: number[]
  hostSessions: number
  hostRepeats: number
  /** Peers: rounds (first dropped) of `stepsPerCall` steps each. */
  peerRounds: number
  /** Connections of the PostgreSQL pool (ours and the peers alike). */
  poolSize: number
  /** Streams: chunks per timed append, timed rounds; chunks per stream and the producer's period in the lag part; length of the rate part. */
  streamsBatch: number
  /** Streams at once in the lag and rate parts (the 64; fewer in the smoke run). */
  streamsConcurrency: number
  streamsRounds: number
  streamsLagChunks: number
  streamsLagEveryMs: number
  streamsSustainMs: number
  /** Plain step vs the commit before issue #31: rounds (the first dropped), steps per round and build. */
  plainRounds: number
  plainSteps: number
}

export const DEFAULT_CONFIG: BenchConfig = {
  mode: 'default',
  stepRounds: 9,
  toolCallsPerRound: 3,
  stepsPerCall: 20,
  recoverySizes: [1_000, 10_000, 100_000],
  recoveryRepeats: [5, 3, 1],
  concurrency: [1, 8, 64],
  throughputSteps: 100,
  throughputRepeats: 5,
  hostProcesses: [1, 2, 4],
  hostSessions: 64,
  hostRepeats: 3,
  peerRounds: 9,
  poolSize: 16,
  streamsBatch: 32,
  streamsConcurrency: 64,
  streamsRounds: 60,
  streamsLagChunks: 40,
  streamsLagEveryMs: 100,
  streamsSustainMs: 3_000,
  plainRounds: 21,
  plainSteps: 100,
}

export const QUICK_CONFIG: BenchConfig = {
  mode: 'quick',
  stepRounds: 2,
  toolCallsPerRound: 2,
  stepsPerCall: 5,
  recoverySizes: [500],
  recoveryRepeats: [1],
  concurrency: [1, 8],
  throughputSteps: 5,
  throughputRepeats: 1,
  hostProcesses: [1, 2],
  hostSessions: 4,
  hostRepeats: 1,
  peerRounds: 2,
  poolSize: 8,
  streamsBatch: 32,
  streamsConcurrency: 8,
  streamsRounds: 10,
  streamsLagChunks: 5,
  streamsLagEveryMs: 100,
  streamsSustainMs: 500,
  plainRounds: 3,
  plainSteps: 10,
}

/** A short, unique, lowercase id for this run: schema, table, bucket and prefix names include it. */
export function newRunId(): string {
  return `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`
}
