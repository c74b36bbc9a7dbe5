import assert from 'node:assert/strict'
import { appendToNewLog, assertSame, defineCase, expectCode, readLog } from '../case.js'

const TTL = 30_000

/** Two namespaces alive at once, with the same session ids: nothing crosses between them. */
export const namespaceCases = [
  defineCase({
    id: 'log.namespaces-isolated',
    title: 'two namespaces alive at once never share a log: same ids, separate seqs, separate deletes',
    async run({ store, openNamespace }) {
      const second = await openNamespace()
      const shared = 'the same id in the other namespace already has a log: namespaces share data'
      await appendToNewLog(store, 's', [{ type: 't', ns: 1 }], shared)
      await appendToNewLog(second.store, 's', [{ type: 't', ns: 2 }], shared)
      await second.store.append('s', 2, [{ type: 't', ns: 2, n: 2 }])
      await expectCode(store.append('s', 3, [{ type: 't' }]), 'LOG_CONFLICT', "the first namespace's next seq is its own")
      assert.deepEqual(await readLog(store, 's'), [{ type: 't', ns: 1 }])
      await store.delete('s')
      assert.equal((await readLog(second.store, 's')).length, 2, 'a delete in one namespace removed a log of the other')
      await store.append('only-first', 1, [{ type: 't' }])
      assert.deepEqual(await readLog(await second.openStore(), 'only-first'), [])
    },
  }),
  defineCase({
    id: 'lease.namespaces-isolated',
    title: 'a lease in one namespace never blocks or ends the lease of the same session in another',
    requires: ['leases'],
    async run({ store, openNamespace, clock }) {
      const second = await openNamespace()
      const a = await store.leases!.acquire('s', 'host-a', TTL)
      const b = await second.store.leases!.acquire('s', 'host-b', TTL).catch((error: { code?: string }) => {
        if (error.code !== 'LEASE_HELD') throw error
        assert.fail('the lease of "s" in a second namespace is held by the first namespace\'s owner: namespaces share leases')
      })
      await store.leases!.release(a)
      await expectCode(second.store.leases!.acquire('s', 'host-c', TTL), 'LEASE_HELD', 'the second namespace keeps its lease')
      clock.advance(TTL / 2)
      await second.store.leases!.renew(b, TTL)
      await store.delete('s')
      await expectCode(second.store.leases!.acquire('s', 'host-c', TTL), 'LEASE_HELD', 'a delete in the first namespace')
    },
  }),
  defineCase({
    id: 'wakeup.namespaces-isolated',
    title: 'due and claim list only their own namespace, and cancel and delete leave the same session of another namespace',
    requires: ['wakeups'],
    async run({ store, openNamespace, clock }) {
      const second = await openNamespace()
      const first = store.wakeups!
      const other = second.store.wakeups!
      const now = clock.now()
      await first.schedule('s', now - 30)
      await first.schedule('one', now - 20)
      await other.schedule('s', now - 25)
      await other.schedule('two', now - 10)
      assertSame(
        await first.due(10),
        [
          { logId: 's', at: now - 30 },
          { logId: 'one', at: now - 20 },
        ],
        'due in the first namespace (two namespaces alive at once)',
      )
      assertSame(
        await other.due(10),
        [
          { logId: 's', at: now - 25 },
          { logId: 'two', at: now - 10 },
        ],
        'due in the second namespace',
      )
      assert.deepEqual(
        (await other.claim(10, 60_000)).map((x) => x.logId),
        ['s', 'two'],
      )
      assert.deepEqual(
        (await first.claim(10, 60_000)).map((x) => x.logId),
        ['s', 'one'],
        "a claim in one namespace hid the other's wakeups",
      )
      clock.advance(60_000)
      await first.cancel('s')
      await store.delete('one')
      assert.deepEqual(
        (await other.due(10)).map((x) => x.logId),
        ['s', 'two'],
      )
      assert.deepEqual(await first.due(10), [])
    },
  }),
]
