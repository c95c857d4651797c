import { describe, expect, it } from 'vitest'
import type { Broker } from '../../src/index.js'
import { recordEvents, setupDatabase, uniqueQueue, until } from '../helpers.js'
import { recordLogs } from './harness/record-logs.js'
import { type CutMode, tcpProxy } from './harness/tcp-proxy.js'

const db = setupDatabase()

// Short liveness settings, as in frozen-worker.test.ts, with a wider margin:
// both workers share this process's event loop with the test on a loaded
// 2-core machine, and neither may be presumed dead for a stall of its own.
const liveness = { staleAfterMs: 2_000, heartbeatIntervalMs: 250 }
const BLOCKED = /no heartbeat for \d+ ms while PostgreSQL answered/
/** Either of the heartbeat's two presumed-dead lines (not the refused-outcomes warning). */
const PRESUMED_DEAD = /^worker (lost PostgreSQL|was presumed dead)/

const partitions: readonly { mode: CutMode; outage: RegExp }[] = [
  // Rejected connections: every heartbeat fails at once.
  { mode: 'refuse', outage: /^worker lost PostgreSQL for \d+ ms \(its heartbeats failed: / },
  // Dropped packets: the heartbeat in flight hangs until the partition
  // heals (its deadline, queryTimeoutMs, is 15 s); one sent on a new
  // connection may fail first, after connectTimeoutMs.
  {
    mode: 'drop',
    outage: /^worker lost PostgreSQL for \d+ ms \(its heartbeats? (failed|went unanswered): /,
  },
]

describe.each(partitions)(
  'a worker cut off from PostgreSQL longer than staleAfterMs (cut: $mode)',
  ({ mode, outage: OUTAGE }) => {
    it('is swept by the other worker; on its return it names the outage, registers again and carries on', async () => {
      const proxy = await tcpProxy(db.url)
      let cutOff: Broker | undefined
      const [row] = await db.sql<{ name: string }[]>`select current_database() as name`
      const name = row!.name
      if (mode === 'drop') {
        // A partition that drops packets can strand a transaction of the
        // cut-off worker on the server, idle and holding its locks (the
        // rescuer's lock among them) until the server notices the dead
        // connection: hours with default TCP keepalives. Production should
        // bound it as this test does.
        await db.sql`alter database ${db.sql(name)} set idle_in_transaction_session_timeout = '1s'`
      }
      try {
        const queue = uniqueQueue('partition')
        const held = 4
        const fresh = 20
        let open: () => void = () => {}
        const gate = new Promise<void>((resolve) => {
          open = resolve
        })
        // The partitioned worker: every connection it opens, LISTEN included,
        // goes through the proxy.
        const logs = recordLogs()
        cutOff = db.broker({ url: proxy.url, listenUrl: proxy.url, logger: logs.logger })
        cutOff.actor(
          'work',
          async (i: number) => {
            if (i < held) await gate
          },
          { queue },
        )
        const direct = db.broker({ logger: { debug() {}, info() {}, warn() {}, error() {} } })
        const work = direct.actor('work', (_i: number) => {}, { queue })
        const cutOffStarted = recordEvents(cutOff, 'message:started')
        const cutOffFinished = recordEvents(cutOff, 'message:finished')
        const directFinished = recordEvents(direct, 'message:finished')
        const recovered = recordEvents(direct, 'messages:recovered')
        const refused = recordEvents(cutOff, 'messages:refused')

        const partitioned = cutOff.worker({ queues: [queue], concurrency: held, ...liveness })
        await partitioned.start()
        await direct.enqueueMany(Array.from({ length: held }, (_, i) => work.message(i)))
        await until(() => cutOffStarted.length === held, 30_000, 'the cut-off worker to hold them')
        const heldIds = new Set(cutOffStarted.map((e) => e.message.id))
        const other = direct.worker({ queues: [queue], concurrency: 8, ...liveness })
        await other.start()

        proxy.cut(mode)
        // Its heartbeats now fail or hang; once its last one is older than
        // staleAfterMs the other worker's rescuer queues what it held, and runs it.
        const recoveredIds = () => new Set(recovered.flatMap((e) => e.messages.map((m) => m.id)))
        await until(
          () => [...heldIds].every((id) => recoveredIds().has(id)),
          60_000,
          'the other worker to recover what the cut-off worker held',
        )
        await until(
          () =>
            [...heldIds].every((id) =>
              directFinished.some((e) => e.message.id === id && e.workerId === other.id),
            ),
          60_000,
          'the other worker to run the recovered messages',
        )
        // Its handlers end during the partition: their outcomes cannot be written yet.
        open()
        await until(() => cutOffFinished.length === held, 30_000, 'the cut-off handlers to end')
        expect(proxy.cutMode).toBe(mode)
        proxy.restore()

        await until(
          () => logs.count(PRESUMED_DEAD) > 0,
          60_000,
          'the cut-off worker to notice it was presumed dead',
        )
        // The outcomes its handlers reached during the partition are refused,
        // and reported: the other worker's stand.
        const refusedIds = () => refused.flatMap((e) => e.messages.map((m) => m.id))
        await until(
          () => refusedIds().length >= held,
          30_000,
          'the cut-off worker to report its refused outcomes',
        )
        await until(
          async () => {
            const rows = await db.sql`select 1 from iddqueue.workers where id = ${partitioned.id}`
            return rows.length === 1
          },
          30_000,
          'the cut-off worker to register again',
        )
        // It carries on: with the other worker gone, it runs every new message.
        await other.stop()
        const before = cutOffFinished.length
        await direct.enqueueMany(Array.from({ length: fresh }, (_, i) => work.message(held + i)))
        await until(
          () => cutOffFinished.length === before + fresh,
          60_000,
          'the cut-off worker to run the new messages',
        )
        const ranNew = cutOffFinished.slice(before)
        expect(
          ranNew.every((e) => e.workerId === partitioned.id && e.outcome.kind === 'success'),
        ).toBe(true)
        expect(new Set(ranNew.map((e) => e.message.args[0])).size).toBe(fresh)
        await direct.join({ queues: [queue], timeoutMs: 30_000 })

        const rows = await db.sql`select state, count(*)::int as n from iddqueue.messages
        where queue = ${queue} group by state`
        expect(rows).toEqual([{ state: 'done', n: held + fresh }])
        // Each held message ran once more, on the other worker, and only once there.
        const rerun = directFinished.filter((e) => heldIds.has(e.message.id))
        expect(rerun.map((e) => e.message.id).sort()).toEqual([...heldIds].sort())
        // Exactly one presumed-dead line, and it names the outage, not a blocked event loop.
        const presumedDead = logs.lines.filter((l) => PRESUMED_DEAD.test(l.message))
        expect(presumedDead.map((l) => l.message)).toEqual([expect.stringMatching(OUTAGE)])
        expect(presumedDead[0]?.level).toBe('warn')
        expect(logs.count(BLOCKED)).toBe(0)
        const outage = presumedDead[0]!.message
        expect(refusedIds().sort()).toEqual([...heldIds].sort())
        expect(refused.every((e) => e.workerId === partitioned.id)).toBe(true)
        expect(refused.flatMap((e) => e.messages.map((m) => m.outcome))).toEqual(
          Array(held).fill('success'),
        )
        await partitioned.stop()
        console.info(
          `chaos partition (${mode}): ${held} held when cut, recovered and run by the other worker; ${proxy.accepted} connections through the proxy, reconnection attempts included; the cut-off worker logged "${outage.slice(0, 110)}…", its ${refusedIds().length} late outcomes were refused, and it ran ${fresh} new messages`,
        )
      } finally {
        // A failed test must not leave the cut-off broker to close through a dead proxy.
        proxy.restore()
        await cutOff?.close()
        await proxy.close()
        if (mode === 'drop') {
          await db.sql`alter database ${db.sql(name)} reset idle_in_transaction_session_timeout`
        }
      }
    }, 180_000)
  },
)
