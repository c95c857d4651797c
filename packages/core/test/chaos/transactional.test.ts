import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import type { TransactionalContext } from '../../src/index.js'
import { setupDatabase, until } from '../helpers.js'

const db = setupDatabase()
const child = fileURLToPath(new URL('../fixtures/transactional-child.mjs', import.meta.url))

interface ChildMessage {
  ready?: string
  started?: string
  completed?: string
  warn?: string
  message?: string
}

function spawnWorker(queue: string, waitMs: number, concurrency: number) {
  const proc = fork(child, [db.url, queue, String(waitMs), String(concurrency)], {
    stdio: 'ignore',
  })
  const seen: ChildMessage[] = []
  proc.on('message', (m: ChildMessage) => seen.push(m))
  return { proc, seen }
}

async function count(text: string, ...params: unknown[]): Promise<number> {
  const [row] = await db.sql.unsafe(text, params as never[])
  return row?.n as number
}

function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    proc.once('exit', () => resolve())
    proc.kill('SIGKILL')
  })
}

beforeAll(async () => {
  // No unique constraint on purpose: a second commit of an effect would show as a second row.
  await db.sql`create table if not exists effects (message_id uuid not null, note text not null)`
})

describe('transactional actors under crashes', () => {
  it('5,000 messages, 3 worker processes, 5 SIGKILLs: exactly one effect row per message', async () => {
    const queue = 'tx_kill'
    const total = 5_000
    const broker = db.broker()
    const effect = broker.actor('effect', (_ctx: TransactionalContext) => {}, {
      queue,
      transactional: true,
    })
    for (let i = 0; i < total; i += 1_000) {
      await broker.enqueueMany(Array.from({ length: 1_000 }, () => effect.message()))
    }
    const workers = [0, 1, 2].map(() => spawnWorker(queue, 2, 4))
    const done = () =>
      count(
        `select count(*)::int as n from iddqueue.messages where queue = $1 and state = 'done'`,
        queue,
      )
    for (const threshold of [400, 1_100, 1_900, 2_700, 3_500]) {
      await until(async () => (await done()) >= threshold, 240_000, `${threshold} messages done`)
      // Kill the oldest worker mid-run and start a replacement.
      const victim = workers.shift()!
      await stop(victim.proc)
      workers.push(spawnWorker(queue, 2, 4))
    }
    await until(async () => (await done()) === total, 240_000, 'every message done')
    for (const worker of workers) await stop(worker.proc)
    expect(
      await count(
        `select count(*)::int as n from effects e join iddqueue.messages m
      on m.id = e.message_id where m.queue = $1`,
        queue,
      ),
    ).toBe(total)
    expect(
      await count(
        `select count(distinct e.message_id)::int as n from effects e
      join iddqueue.messages m on m.id = e.message_id where m.queue = $1`,
        queue,
      ),
    ).toBe(total)
  }, 300_000)

  it('a worker stopped past the liveness timeout: its commit is refused and rolled back, the effect happens once, and it carries on', async () => {
    const queue = 'tx_stop'
    const broker = db.broker()
    const effect = broker.actor(
      'effect',
      async (ctx: TransactionalContext) => {
        await ctx.transaction`insert into effects (message_id, note) values (${ctx.message.id}, 'survivor')`
      },
      { queue, transactional: true },
    )
    const first = await effect.send()
    const stopped = spawnWorker(queue, 1_500, 1)
    await until(
      () => stopped.seen.some((m) => m.started === first.id),
      60_000,
      'the child to start',
    )
    stopped.proc.kill('SIGSTOP')
    // A worker here recovers the stopped one's message once it looks dead, and runs it.
    const survivor = broker.worker({
      queues: [queue],
      heartbeatIntervalMs: 100,
      staleAfterMs: 1_000,
    })
    await survivor.start()
    await until(
      async () =>
        (await count(
          `select count(*)::int as n from iddqueue.messages where id = $1 and state = 'done'`,
          first.id,
        )) === 1,
      60_000,
      'the survivor to run the message',
    )
    await survivor.stop()
    stopped.proc.kill('SIGCONT')
    await until(
      () => stopped.seen.some((m) => m.warn?.includes('commit refused') && m.message === first.id),
      60_000,
      'the stopped worker to report its refused commit',
    )
    const notes = await db.sql`select note from effects where message_id = ${first.id}`
    expect(notes.map((r) => r.note)).toEqual(['survivor'])
    // It carries on: the next message runs and commits there.
    const second = await effect.send()
    await until(
      () => stopped.seen.some((m) => m.completed === second.id),
      60_000,
      'the next message',
    )
    expect(
      await count(`select count(*)::int as n from effects where message_id = $1`, second.id),
    ).toBe(1)
    await stop(stopped.proc)
  }, 180_000)
})
