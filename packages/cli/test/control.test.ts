import { type ActorContext, uuid7 } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { setupDatabase, states, uniqueQueue } from './helpers.js'

const db = setupDatabase()

describe('iddqueue pause, resume and queue-status', () => {
  it('pauses a queue its worker confirms, holds new messages, and resumes it', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('paused')
    const ran: number[] = []
    const job = broker.actor('job', (n: number) => void ran.push(n), { queue })
    // Polls often, so a claim comes soon after the send whatever its wake-up did.
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()

    const paused = await db.cli('pause', queue)
    expect(paused).toMatchObject({ code: 0, stderr: '' })
    expect(paused.json()).toEqual({ queue, paused: true, workers: 1, acknowledged: 1 })
    expect(await broker.isPaused(queue)).toBe(true)

    let sentAt = Number.POSITIVE_INFINITY
    const emptyClaim = new Promise<void>((resolve) =>
      broker.on('worker:claimed', ({ count, durationMs }) => {
        // A claim that started after the send and took nothing: the pause held it back.
        if (count === 0 && performance.now() - durationMs > sentAt) resolve()
      }),
    )
    await job.send(1)
    sentAt = performance.now()
    await emptyClaim
    expect(ran).toEqual([])
    expect(await states(db.sql, queue)).toEqual({ queued: 1 })

    const status = await db.cli('queue-status', queue)
    expect(status.json()).toEqual({ queue, paused: true })
    const all = await db.cli('queue-status')
    expect(all.json<{ paused: string[] }>().paused).toContain(queue)

    const resumed = await db.cli('resume', queue)
    expect(resumed).toMatchObject({ code: 0, stderr: '' })
    expect(resumed.json()).toEqual({ queue, paused: false })
    await broker.join({ queues: [queue], timeoutMs: 10_000 })
    expect(ran).toEqual([1])
    expect((await db.cli('queue-status', queue)).json()).toEqual({ queue, paused: false })
    await worker.stop()
  })

  it('pauses a queue no worker consumes at once', async () => {
    const queue = uniqueQueue('idle')
    const paused = await db.cli('pause', queue, '--timeout-ms', '0')
    expect(paused.json()).toEqual({ queue, paused: true, workers: 0, acknowledged: 0 })
    const [row] = await db.sql`select paused from iddqueue.queue_control where queue = ${queue}`
    expect(row?.paused).toBe(true)
    expect((await db.cli('resume', queue)).code).toBe(0)
  })

  it('refuses a missing or invalid queue name with exit 2, pausing nothing', async () => {
    const cases: [string[], string][] = [
      [['pause'], 'iddqueue pause: missing QUEUE'],
      [['pause', 'no good'], 'iddqueue pause: Invalid queue name "no good"'],
      [
        ['pause', 'q', '--timeout-ms=-1'],
        'iddqueue pause: invalid --timeout-ms "-1": expected a whole number',
      ],
      [
        // Past the longest Node timer: the pause was stored, then the wait fired at once.
        ['pause', 'q', '--timeout-ms', '2147483648'],
        'iddqueue pause: Invalid timeoutMs 2147483648 (pause()): expected an integer from 0 to 2147483647',
      ],
      [['resume'], 'iddqueue resume: missing QUEUE'],
      [['queue-status', 'a b'], 'iddqueue queue-status: Invalid queue name "a b"'],
      [['queue-status', 'a', 'b'], 'iddqueue queue-status: unexpected argument "b"'],
    ]
    for (const [argv, text] of cases) {
      const run = await db.cli(...argv)
      expect(run.code, argv.join(' ')).toBe(2)
      expect(run.stderr).toContain(text)
      expect(run.stdout).toBe('')
    }
    const rows =
      await db.sql`select queue from iddqueue.queue_control where queue in ('no good', 'q')`
    expect(rows).toEqual([])
  })
})

describe('iddqueue cancel and cancel-status', () => {
  it('cancels a queued message, which then never runs', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('cancel')
    const job = broker.actor('later', () => {}, { queue })
    const sent = await job.sendWithOptions({ args: [], delayMs: 60_000 })

    const run = await db.cli('cancel', sent.id)
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.json()).toEqual({ id: sent.id, status: 'cancelled', state: 'cancelled' })
    expect(await states(db.sql, queue)).toEqual({ cancelled: 1 })

    const status = await db.cli('cancel-status', sent.id)
    expect(status.code).toBe(0)
    expect(status.json()).toEqual({ id: sent.id, state: 'cancelled', requested: true })

    const again = await db.cli('cancel', sent.id)
    expect(again.json()).toMatchObject({ status: 'cancelled', state: 'cancelled' })
  })

  it("requests the cancellation of a running message, aborting its handler's signal", async () => {
    const broker = db.broker()
    const queue = uniqueQueue('running')
    let started!: () => void
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    const job = broker.actor(
      'long',
      async (ctx: ActorContext) => {
        started()
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))
        throw ctx.signal.reason
      },
      { queue, maxRetries: 0 },
    )
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    const sent = await job.send()
    await running

    const run = await db.cli('cancel', sent.id)
    expect(run.code).toBe(0)
    expect(run.json()).toEqual({ id: sent.id, status: 'requested', state: 'consumed' })
    await broker.join({ queues: [queue], timeoutMs: 10_000 })
    await worker.stop()
    expect((await db.cli('cancel-status', sent.id)).json()).toEqual({
      id: sent.id,
      state: 'cancelled',
      requested: true,
    })
  })

  it('leaves a finished message alone and exits 3 for a missing one', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('done')
    const job = broker.actor('quick', () => 'ok', { queue })
    const sent = await job.send()
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()

    const done = await db.cli('cancel', sent.id)
    expect(done.code).toBe(0)
    expect(done.json()).toEqual({ id: sent.id, status: 'terminal', state: 'done' })
    expect(done.stderr).toBe(
      `iddqueue cancel: message ${sent.id} is already done; nothing changed\n`,
    )
    expect(await states(db.sql, queue)).toEqual({ done: 1 })

    const missing = uuid7()
    const none = await db.cli('cancel', missing)
    expect(none.code).toBe(3)
    expect(none.json()).toEqual({ id: missing, status: 'missing', state: null })
    const noStatus = await db.cli('cancel-status', missing)
    expect(noStatus.code).toBe(3)
    expect(noStatus.json()).toEqual({ id: missing, state: null, requested: false })
    expect(noStatus.stderr).toBe(`iddqueue cancel-status: no message ${missing}\n`)
  })

  it('exits 2 on a malformed id, cancelling nothing', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('keep')
    await broker.actor('kept', () => {}, { queue }).send()
    for (const command of ['cancel', 'cancel-status']) {
      const run = await db.cli(command, 'abc')
      expect(run).toMatchObject({ code: 2, stdout: '' })
      expect(run.stderr).toContain(`iddqueue ${command}: invalid message id "abc": expected a UUID`)
    }
    const missing = await db.cli('cancel-status')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('iddqueue cancel-status: missing ID')
    // Without an ID, cancel needs --all: a forgotten ID never cancels a queue.
    const bare = await db.cli('cancel')
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain('iddqueue cancel: cancel needs an ID, or --all')
    expect(await states(db.sql, queue)).toEqual({ queued: 1 })
  })
})
