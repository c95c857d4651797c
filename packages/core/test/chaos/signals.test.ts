import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { setupDatabase, states, uniqueQueue, until } from '../helpers.js'

const db = setupDatabase()
const child = fileURLToPath(new URL('../fixtures/signal-child.mjs', import.meta.url))

describe('stopOnSignals', () => {
  it('on SIGTERM finishes the running handler, returns prefetched messages, deregisters, and lets the process exit', async () => {
    const queue = uniqueQueue('signals')
    const broker = db.broker()
    const slow = broker.actor('slow', () => {}, { queue })
    await broker.enqueueMany(Array.from({ length: 5 }, () => slow.message()))
    const proc = fork(child, [db.url, queue], { stdio: 'ignore' })
    let workerId = ''
    let started = 0
    proc.on('message', (m: { ready?: string; started?: boolean }) => {
      if (m.ready) workerId = m.ready
      if (m.started) started++
    })
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
    await until(() => workerId !== '' && started === 1, 15_000, 'the child to start a handler')
    proc.kill('SIGTERM')
    const code = await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000)),
    ])
    expect(code).toBe(0)
    expect(await states(db.sql, { queue })).toEqual({ done: 1, queued: 4 })
    const rows =
      await db.sql`select count(*)::int as n from iddqueue.workers where id = ${workerId}`
    expect(rows[0]?.n).toBe(0)
  }, 30_000)
})
