import type { BenchResult, PlainStepResult, StreamsRow, TakeoverRow, Timing } from './result.js'

/** Renders a result as Markdown tables: what `pnpm bench` prints and the README shows. */
export function renderTables(result: BenchResult): string {
  const m = result.machine
  const out: string[] = []
  out.push(
    `Run ${result.runId} (${result.mode}), ${result.startedAt}, ${(result.durationMs / 1000).toFixed(1)} s — ` +
      `${m.nproc} cores (${m.cpu}), ${m.memoryGiB} GiB, node ${m.node}, ${m.postgres ?? 'no PostgreSQL'}, ${m.platform}`,
  )

  out.push('', '### 1. One step.do vs one bare conditional write of the same bytes (same client)', '')
  out.push(
    table(
      [
        'store',
        'step.do ms (p90)',
        'bare write ms (p90)',
        'ratio',
        'requests/step (reads)',
        'store calls/step',
        'commit ms',
        'bare commit ms',
        'commit ratio',
        'requests/commit',
        'requests/open',
      ],
      result.stepCost.map((r) => [
        r.store,
        ms(r.step),
        ms(r.bareWrite),
        x(r.ratio),
        `${r.requestsPerStep.median} (max ${r.requestsPerStep.max}, reads ${r.requestsPerStep.reads})`,
        `${r.storeCallsPerStep.append} append, ${r.storeCallsPerStep.read} read`,
        `${ms(r.commit.store)} [${r.commit.records} rec, ${r.commit.bytes} B]`,
        ms(r.commit.bareWrite),
        x(r.commit.ratio),
        String(r.commit.requests),
        String(r.requestsPerOpen),
      ]),
    ),
  )

  out.push('', '### 2. Recovery: host.open (lease, read, fold) in a fresh process vs a bare read of the same bytes', '')
  out.push(
    table(
      [
        'store',
        'records',
        'first open ms',
        'open ms (median)',
        'bare read ms',
        'ratio',
        'peak RSS growth MB',
        'bytes/record',
        'retained heap MB',
        'requests/open',
      ],
      result.recovery.map((r) => [
        r.store,
        String(r.records),
        fixed(r.openFirstMs),
        fixed(r.open.medianMs),
        fixed(r.bareRead.medianMs),
        x(r.ratio),
        fixed(r.peakRssGrowthMB),
        String(r.bytesPerRecordPeak),
        fixed(r.retainedHeapMB),
        String(r.requestsPerOpen),
      ]),
    ),
  )
  out.push('', 'Growth (linear: time and memory factors equal the records factor)', '')
  out.push(
    table(
      ['store', 'records', 'time ×', 'peak memory ×', 'records ×'],
      result.growth.map((g) => [g.store, `${g.from} → ${g.to}`, x(g.timeFactor), x(g.memoryFactor), `${g.recordsFactor}×`]),
    ),
  )

  out.push('', '### 3. Throughput: steps per second with concurrent sessions (one host)', '')
  out.push(
    table(
      [
        'store',
        'sessions',
        'steps',
        'steps/s',
        'bare writes/s',
        'ours/bare',
        'spread',
        'CPU µs/step',
        'bare CPU µs/write',
        'harness CPU µs/step',
      ],
      result.throughput.map((r) => [
        r.store,
        String(r.sessions),
        String(r.steps),
        String(r.stepsPerSecond),
        String(r.bareWritesPerSecond),
        x(r.ratio),
        `${x(r.ratioSpread[0])}–${x(r.ratioSpread[1])}`,
        String(r.cpuMicrosPerStep),
        String(r.bareCpuMicrosPerWrite),
        String(r.harnessCpuMicrosPerStep),
      ]),
    ),
  )

  if (result.hosts.length > 0) {
    out.push('', '### 5. Several hosts on one PostgreSQL: steps per second with 1, 2 and 4 host processes', '')
    out.push(
      table(
        ['processes', 'sessions each', 'steps', 'steps/s', 'bare writes/s', 'ours/bare', 'CPU µs/step (all processes)'],
        result.hosts.map((h) => [
          String(h.processes),
          String(h.sessionsPerProcess),
          String(h.steps),
          String(h.stepsPerSecond),
          String(h.bareWritesPerSecond),
          x(h.ratio),
          String(h.cpuMicrosPerStep),
        ]),
      ),
    )
  }

  out.push('', '### 4. Peers on the same PostgreSQL: one memoized step with the same small value', '')
  out.push(
    table(
      ['contender', 'status', 'ms/step (p90)', 'ratio to ours', 'queries/step', 'what is timed'],
      result.peers.map((p) => [
        p.name,
        p.status === 'ok' ? 'ok' : `blocked: ${p.error}`,
        p.step ? ms(p.step) : '—',
        x(p.ratioToOurs),
        p.requestsPerStep === undefined ? '—' : String(p.requestsPerStep),
        p.what,
      ]),
    ),
  )

  out.push(...takeoverTable(result.takeover ?? []))
  out.push(...streamsTable(result.streams ?? []))
  out.push(...plainStepTable(result.plainStep))

  if (result.failures.length > 0) {
    out.push('', '### Failures', '')
    out.push(
      table(
        ['section', 'store', 'error'],
        result.failures.map((f) => [f.section, f.store ?? '', f.error]),
      ),
    )
  }
  return `${out.join('\n')}\n`
}

function table(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|').replace(/\n/g, ' ')).join(' | ')} |`
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n')
}

const fixed = (value: number, digits = 3) => (Number.isFinite(value) ? value.toFixed(digits) : '—')
const ms = (t: Timing) => `${fixed(t.medianMs)} (${fixed(t.p90Ms)})`
const x = (value: number | null) => (value === null ? '—' : `${value.toFixed(2)}×`)

/** Section 6, when it ran. */
function takeoverTable(rows: readonly TakeoverRow[]): string[] {
  if (rows.length === 0) return []
  return [
    '',
    '### 6. Recovery latency: SIGKILL of the driving process to the first step of the resumed turn in another process',
    '',
    table(
      [
        'store',
        'resumed by',
        'after the kill (graceful: the SIGTERM)',
        'of it, after the store was open',
        'default lease',
        'of a lease',
        'goal',
      ],
      rows.map((r) => [
        r.store,
        r.scenario,
        r.trialsMs ? `${r.afterKillMs} ms (median of ${r.trialsMs.join(', ')})` : `${r.afterKillMs} ms`,
        r.afterReadyMs === null ? '—' : `${r.afterReadyMs} ms`,
        `${r.leaseMs / 1000} s`,
        x(r.ofLease),
        `< ${r.goalMs} ms`,
      ]),
    ),
    ...takeoverPhases(rows),
  ]
}

/** Where a takeover's time went: the new process's marks (the store calls but the lease that was taken left out), and PGlite alone. */
function takeoverPhases(rows: readonly TakeoverRow[]): string[] {
  const marked = rows.filter((r) => r.phases && r.phases.length > 0)
  if (marked.length === 0) return []
  const kept = (phases: NonNullable<TakeoverRow['phases']>) => {
    const lease = phases.filter((p) => /^leases\.acquire#\d+ end/.test(p.phase)).at(-1)
    return phases.filter((p) => !p.phase.includes('#') || p === lease).map((p) => `${p.phase.replace(/#\d+ end$/, '')} ${p.ms}`)
  }
  return [
    '',
    'Where the time went (ms after the kill; PGlite alone: a bare `PGlite.create` and one query on the same folder, ms after its spawn)',
    '',
    table(
      ['store', 'resumed by', 'marks', 'PGlite alone', 'ours / alone (from spawn)'],
      marked.map((r) => [
        r.store,
        r.scenario,
        kept(r.phases!).join(', '),
        r.bare ? r.bare.phases.map((p) => `${p.phase} ${p.ms}`).join(', ') : '—',
        r.bare ? `${r.bare.oursFromSpawnMs} / ${r.bare.startMs} ms = ${x(r.bare.ratio)}` : '—',
      ]),
    ),
  ]
}

/** Section 7, when it ran. */
function streamsTable(rows: readonly StreamsRow[]): string[] {
  if (rows.length === 0) return []
  return [
    '',
    '### 7. Resumable streams: an append of a batch of chunks against a bare write of its bytes; reader lag and chunks/s at 64 streams',
    '',
    table(
      [
        'store',
        'append of a batch, ms (p90)',
        'bare write, ms (p90)',
        'ratio (goal ≤ 1.2×)',
        'reader lag p50 / p99',
        'chunks/s',
        'bare chunks/s',
        'ours / bare',
      ],
      rows.map((r) => [
        `${r.store} (${r.batch} chunks)`,
        ms(r.append),
        ms(r.bareWrite),
        x(r.ratio),
        `${r.lagP50Ms} / ${r.lagP99Ms} ms (${r.streams} streams)`,
        String(r.chunksPerSecond),
        String(r.bareChunksPerSecond),
        x(r.rateRatio),
      ]),
    ),
  ]
}

/** Section 8, when it ran. */
function plainStepTable(plain: PlainStepResult | undefined): string[] {
  if (!plain) return []
  const list = (values: readonly number[]) => values.join(', ')
  return [
    '',
    '### 8. A plain step.do (no verify, once or undo): this build vs an earlier commit (by default the one before issue #31), same run, memory store',
    '',
    table(
      ['build', 'commit', 'step.do ms (p90)', 'steps', 'appends/step', 'records/append', 'bytes/step'],
      plain.builds.map((b) => [
        b.build,
        b.commit.slice(0, 12) + b.commit.slice(40),
        ms(b.step),
        String(b.step.samples),
        list(b.appendsPerStep),
        list(b.recordsPerAppend),
        list(b.bytesPerStep),
      ]),
    ),
    '',
    `This build / before: ${x(plain.ratio)} (round by round: median ${x(plain.roundRatio.median)}, ` +
      `${x(plain.roundRatio.spread[0])}–${x(plain.roundRatio.spread[1])}); the same writes per step: ${plain.sameWrites ? 'yes' : 'NO'}.`,
  ]
}
