import assert from 'node:assert/strict'
import { compareWakeups, type HarnessStore, type Lease, WAITING_FOR_PERSON, type Wakeup } from '@tanstack/ai-harness/store'
import fc from 'fast-check'
import { assertSame, type CaseContext, defineCase, readLog } from '../case.js'
import { checkGenerated, trickyId } from '../generated.js'
import { ContractModel } from '../model/contract-model.js'
import { listAll } from '../model/listing.js'

const TTL = 3_600_000
const HOLD = 3_600_000
const OWNERS = ['host-a', 'host-b'] as const

/** One call of the generated sequences, on namespace `ns` (an index into the case's namespaces). */
type Op =
  | { op: 'append'; ns: number; id: string; n: number }
  | { op: 'read' | 'delete' | 'release' | 'renew' | 'cancel'; ns: number; id: string }
  | { op: 'acquire'; ns: number; id: string; owner: number }
  | { op: 'schedule'; ns: number; id: string; when: 'due' | 'person' | 'later'; offset: number }
  | { op: 'due' | 'claim' | 'list' | 'waiting'; ns: number }

const opArbitrary = (namespaces: number): fc.Arbitrary<Op> => {
  const ns = fc.integer({ min: 0, max: namespaces - 1 })
  const onId = <K extends Op['op']>(op: K) => fc.record({ op: fc.constant(op), ns, id: trickyId })
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ op: fc.constant('append' as const), ns, id: trickyId, n: fc.integer({ min: 1, max: 3 }) }) },
    { weight: 2, arbitrary: onId('read' as const) },
    { weight: 1, arbitrary: onId('delete' as const) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('acquire' as const), ns, id: trickyId, owner: fc.integer({ min: 0, max: 1 }) }) },
    { weight: 1, arbitrary: onId('release' as const) },
    { weight: 1, arbitrary: onId('renew' as const) },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('schedule' as const),
        ns,
        id: trickyId,
        when: fc.constantFrom('due' as const, 'person' as const, 'later' as const),
        offset: fc.integer({ min: 1, max: 50 }),
      }),
    },
    { weight: 1, arbitrary: onId('cancel' as const) },
    { weight: 1, arbitrary: fc.record({ op: fc.constantFrom('due' as const, 'claim' as const, 'list' as const, 'waiting' as const), ns }) },
  ) as fc.Arbitrary<Op>
}

interface Side {
  readonly name: string
  readonly store: HarnessStore
  readonly model: ContractModel
  /** The last lease the store gave for each id, and the model's acquisition of it. */
  readonly leases: Map<string, { lease: Lease; acquisition: number }>
}

const FIX =
  'Key every log, lease and wakeup by the exact namespace and the exact id: a whole-key comparison (not a prefix), separators escaped, ids case-sensitive, and a Map or a null-prototype object rather than a plain object'

const codeOf = (error: unknown) => (error as { code?: unknown })?.code

/** Runs one call on the store and the model, and fails when the store answers differently. */
async function step(sides: readonly Side[], op: Op, now: number, history: string[]): Promise<void> {
  const side = sides[op.ns]!
  const { store, model } = side
  const where = `in namespace ${side.name}`
  const label = 'id' in op ? `${op.op} ${JSON.stringify(op.id)} ${where}` : `${op.op} ${where}`
  history.push(label)
  const context = () => `${label} (after ${history.slice(-6, -1).join('; ') || 'nothing'})`
  switch (op.op) {
    case 'append': {
      const seq = model.nextSeq(op.id)
      const batch = Array.from({ length: op.n }, (_, i) => ({ type: 'iso', ns: side.name, id: op.id, n: seq + i }))
      try {
        await store.append(op.id, seq, batch)
      } catch (error) {
        if (codeOf(error) !== 'LOG_CONFLICT') throw error
        const found = await readLog(store, op.id)
        assert.fail(
          `${context()}: the append at seq ${seq} conflicted; the store holds ${found.length} records under that id (${JSON.stringify(found.slice(0, 2))}) where the log holds ${seq - 1}: another namespace's or another id's data reached it. ${FIX}.`,
        )
      }
      model.append(op.id, batch)
      return
    }
    case 'read':
      return assertSame(
        await readLog(store, op.id),
        model.read(op.id),
        `${context()}: the records (each names the namespace and id it was written to). ${FIX}`,
      )
    case 'delete':
      await store.delete(op.id)
      model.delete(op.id)
      return
    case 'acquire': {
      const owner = OWNERS[op.owner]!
      const expected = model.acquire(op.id, owner)
      try {
        const lease = await store.leases!.acquire(op.id, owner, TTL)
        if (expected === 'LEASE_HELD') assert.fail(`${context()}: acquire by ${owner} succeeded while the other owner holds that lease`)
        side.leases.set(op.id, { lease, acquisition: expected })
      } catch (error) {
        if (codeOf(error) !== 'LEASE_HELD') throw error
        if (expected === 'LEASE_HELD') return
        assert.fail(
          `${context()}: acquire by ${owner} is LEASE_HELD, but nobody else holds that session's lease in this namespace: a lease of another namespace or id blocks it. ${FIX}.`,
        )
      }
      return
    }
    case 'release':
    case 'renew': {
      const held = side.leases.get(op.id)
      if (!held) return
      const current = model.holds(op.id, held.acquisition)
      try {
        if (op.op === 'renew') side.leases.set(op.id, { ...held, lease: await store.leases!.renew(held.lease, TTL) })
        else await store.leases!.release(held.lease)
        assert.ok(
          current,
          `${context()}: ${op.op} of a lease that is no longer current succeeded (it was released, superseded or deleted in this namespace)`,
        )
        if (op.op === 'release') model.release(op.id)
      } catch (error) {
        if (codeOf(error) !== 'LEASE_LOST' || !current) throw error
        assert.fail(
          `${context()}: ${op.op} is LEASE_LOST, but the lease is current in this namespace: a call on another namespace or id ended it. ${FIX}.`,
        )
      }
      return
    }
    case 'schedule': {
      const at = op.when === 'person' ? WAITING_FOR_PERSON : op.when === 'due' ? now - op.offset : now + op.offset * 1000
      await store.wakeups!.schedule(op.id, at)
      model.schedule(op.id, at)
      return
    }
    case 'cancel':
      await store.wakeups!.cancel(op.id)
      model.cancel(op.id)
      return
    case 'due':
    case 'claim': {
      const got = op.op === 'due' ? await store.wakeups!.due(1000) : await store.wakeups!.claim(1000, HOLD)
      const expected = op.op === 'due' ? model.due(1000) : model.claim(1000, HOLD)
      const sorted = (list: readonly Wakeup[]) => [...list].map(({ logId, at }) => ({ logId, at })).sort(compareWakeups)
      return assertSame(sorted(got), sorted(expected), `${context()}: the wakeups. ${FIX}`)
    }
    case 'list':
    case 'waiting':
      return assertSame(
        await listAll(store.sessions!, op.op, 1000, context()),
        op.op === 'list' ? model.list() : model.waiting(),
        `${context()}: the ids sessions.${op.op} lists. ${FIX}`,
      )
  }
}

/** The calls a store can take: no lease, wakeup or listing calls on a store without them. */
function supported(store: HarnessStore, op: Op): boolean {
  if (['acquire', 'release', 'renew'].includes(op.op)) return store.leases !== undefined
  if (['schedule', 'cancel', 'due', 'claim'].includes(op.op)) return store.wakeups !== undefined
  if (op.op === 'list' || op.op === 'waiting') return store.sessions !== undefined
  return true
}

/** Every namespace's whole state, compared with its model: what one namespace did must show in no other. */
async function checkEverything(sides: readonly Side[], ids: Iterable<string>, history: string[]): Promise<void> {
  const after = `after ${history.slice(-8).join('; ')}`
  for (const side of sides) {
    for (const id of ids) {
      assertSame(
        await readLog(side.store, id),
        side.model.read(id),
        `${after}: read ${JSON.stringify(id)} in namespace ${side.name}. ${FIX}`,
      )
    }
    if (side.store.sessions) {
      assertSame(
        await listAll(side.store.sessions, 'list', 1000, after),
        side.model.list(),
        `${after}: sessions.list in ${side.name}. ${FIX}`,
      )
    }
    if (side.store.wakeups) {
      const sorted = (list: readonly Wakeup[]) => [...list].map(({ logId, at }) => ({ logId, at })).sort(compareWakeups)
      assertSame(sorted(await side.store.wakeups.due(1000)), sorted(side.model.due(1000)), `${after}: due in ${side.name}. ${FIX}`)
    }
  }
}

/**
 * Namespaces that prefix each other (`root`, `root2`), differ only in case, and hold the
 * separator `_` (`root_x`: with keys joined by `_`, id `x_s` of `root` is id `s` of `root_x`).
 */
async function relatedNamespaces(context: CaseContext, clock: CaseContext['clock']): Promise<Side[]> {
  const root = context.freshRoot()
  const names = [root, `${root}2`, root.toUpperCase(), `${root}_x`]
  const sides: Side[] = []
  for (const name of names) {
    const opened = await context.openNamespace(name)
    sides.push({ name, store: opened.store, model: new ContractModel(() => clock.now()), leases: new Map() })
  }
  return sides
}

export const isolationCases = [
  defineCase({
    id: 'isolation.generated',
    title:
      'generated calls of every kind on namespaces that prefix each other, differ in case or hold separators, with ids that are paths, prefixes, URL characters or Object.prototype names, answer as the contract says: nothing crosses between ids or namespaces',
    async run(context) {
      const { clock } = context
      const sides = await relatedNamespaces(context, clock)
      const store = sides[0]!.store
      const touched = new Set<string>()
      const history: string[] = []
      await checkGenerated(fc.array(opArbitrary(sides.length), { minLength: 10, maxLength: 30 }), 12, async (ops) => {
        for (const op of ops) {
          if (!supported(store, op)) continue
          if ('id' in op) touched.add(op.id)
          await step(sides, op, clock.now(), history)
        }
        await checkEverything(sides, touched, history)
      })
    },
  }),
  defineCase({
    id: 'isolation.path-ids',
    title:
      'ids that are paths of each other (team-7, team-7/alice, team-70), hold . ? # % or are Object.prototype names: each is its own log, lease and wakeup, in both directions, for every call',
    async run(context) {
      const { clock, store } = context
      const model = new ContractModel(() => clock.now())
      const side: Side = { name: context.namespace, store, model, leases: new Map() }
      const ids = [
        'team-7',
        'team-7/alice',
        'team-70',
        'team-7/',
        'a.b',
        'a?b=1',
        'a#frag',
        'a%2Fb',
        'a/b',
        '__proto__',
        'constructor',
        'toString',
        'hasOwnProperty',
        'valueOf',
      ]
      const history: string[] = []
      // Each id in turn touches only itself; every other id is checked after each call.
      for (const [i, id] of ids.entries()) {
        const ops: Op[] = [
          { op: 'append', ns: 0, id, n: i + 1 },
          { op: 'acquire', ns: 0, id, owner: i % 2 },
          { op: 'schedule', ns: 0, id, when: i % 3 === 0 ? 'person' : 'due', offset: i + 1 },
        ]
        for (const op of ops) if (supported(store, op)) await step([side], op, clock.now(), history)
        await checkEverything([side], ids, history)
      }
      for (const id of ids) {
        const ops: Op[] = [
          { op: 'acquire', ns: 0, id, owner: 1 },
          { op: 'release', ns: 0, id },
          { op: 'schedule', ns: 0, id, when: 'due', offset: 60 },
          { op: 'due', ns: 0 },
          { op: 'claim', ns: 0 },
          { op: 'cancel', ns: 0, id },
          { op: 'delete', ns: 0, id },
          { op: 'list', ns: 0 },
        ]
        for (const op of ops) if (supported(store, op)) await step([side], op, clock.now(), history)
        await checkEverything([side], ids, history)
      }
    },
  }),
]
