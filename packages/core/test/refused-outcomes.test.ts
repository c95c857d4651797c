import { describe, expect, it } from 'vitest'
import type { Broker, TransactionalContext, WorkerOptions } from '../src/index.js'
import { recordLogs } from './chaos/harness/record-logs.js'
import { recordEvents, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

const REFUSED =
  /^(\d+) of (\d+) message outcomes refused: the messages were no longer held by this worker/

/** A promise a test opens: handlers wait on it, so they are running when the test acts. */
function gate() {
  let open: () => void = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}

/**
 * Crash recovery of every worker, this live one included, as if it had been
 * presumed dead while its handler ran; with the queue paused first, so the
 * worker cannot claim the recovered message again before its running
 * handler's outcome is written (that outcome then meets a row that is no
 * longer consumed by it). The caller resumes the queue.
 */
async function recoverUnderRunningHandler(broker: Broker, queue: string): Promise<void> {
  await broker.pause(queue)
  expect(await broker.recover({ staleAfterMs: 0 })).toBe(1)
}

/** A handler whose first run waits for `first` to open; `runs()` counts its runs. */
function firstRunWaits(first: ReturnType<typeof gate>, then: () => void = () => {}) {
  let count = 0
  return {
    handler: async () => {
      if (++count === 1) {
        await first.opened
        then()
      }
    },
    runs: () => count,
  }
}

/**
 * Starts a worker, sends one message of `work` and resolves once its
 * handler runs; records the starts and the refused outcomes.
 */
async function startOne(
  broker: Broker,
  work: { send(): Promise<{ readonly id: string }> },
  options: WorkerOptions,
) {
  const started = recordEvents(broker, 'message:started')
  const refused = recordEvents(broker, 'messages:refused')
  const worker = broker.worker(options)
  await worker.start()
  const sent = await work.send()
  await until(() => started.length === 1, 10_000, 'the handler to start')
  return { started, refused, worker, sent }
}

/** Waits for the refusal of `id`'s outcome, the one refusal `worker` reports. */
async function expectRefusal(
  refused: readonly unknown[],
  workerId: string,
  message: { id: string; queue: string; outcome: 'success' | 'failure' },
) {
  await until(() => refused.length > 0, 10_000, 'the refused outcome to be reported')
  expect(refused).toEqual([
    {
      workerId,
      messages: [{ id: message.id, queue: message.queue, actor: 'work', outcome: message.outcome }],
    },
  ])
}

describe.each([false, true])('outcomes refused (deleteOnSuccess: %s)', (deleteOnSuccess) => {
  it('a success written after crash recovery took the message back is refused, counted and reported; the message runs again', async () => {
    const queue = uniqueQueue('refused')
    const logs = recordLogs()
    const broker = db.broker({ deleteOnSuccess, logger: logs.logger })
    const first = gate()
    const { handler, runs } = firstRunWaits(first)
    const work = broker.actor('work', handler, { queue })
    const { refused, worker, sent } = await startOne(broker, work, { queues: [queue] })
    await recoverUnderRunningHandler(broker, queue)
    first.open()
    await expectRefusal(refused, worker.id, { id: sent.id, queue, outcome: 'success' })
    const warnings = logs.lines.filter((l) => REFUSED.test(l.message))
    expect(warnings.map((l) => [l.level, REFUSED.exec(l.message)?.slice(1)])).toEqual([
      ['warn', ['1', '1']],
    ])
    expect(warnings[0]?.fields).toMatchObject({
      worker: worker.id,
      refused: 1,
      messages: [sent.id],
    })
    // Recovery queued it again: the second run's outcome is written.
    await broker.resume(queue)
    await broker.join({ queues: [queue], timeoutMs: 10_000 })
    expect(runs()).toBe(2)
    const rows = await db.sql`select state from iddqueue.messages where id = ${sent.id}`
    expect(rows).toEqual(deleteOnSuccess ? [] : [{ state: 'done' }])
    expect(refused).toHaveLength(1)
    await worker.stop()
  })

  it('the worker claims the recovered message again itself: of its two outcomes one is written, the other refused and reported', async () => {
    const queue = uniqueQueue('refused')
    const broker = db.broker({ deleteOnSuccess, logger: recordLogs().logger })
    const first = gate()
    const work = broker.actor('work', firstRunWaits(first).handler, { queue })
    // One slot, no prefetch: the worker claims the message again as soon as
    // the first run frees its slot, racing that run's acknowledgement.
    const { started, refused, worker, sent } = await startOne(broker, work, {
      queues: [queue],
      concurrency: 1,
      prefetch: 0,
    })
    expect(await broker.recover({ staleAfterMs: 0 })).toBe(1)
    first.open()
    await until(() => started.length === 2, 10_000, 'the worker to run it again')
    await expectRefusal(refused, worker.id, { id: sent.id, queue, outcome: 'success' })
    await broker.join({ queues: [queue], timeoutMs: 10_000 })
    await until(() => worker.stats.settling === 0, 10_000, 'nothing left to write')
    expect(started.map((e) => e.workerId)).toEqual([worker.id, worker.id])
    const rows = await db.sql`select state from iddqueue.messages where id = ${sent.id}`
    expect(rows).toEqual(deleteOnSuccess ? [] : [{ state: 'done' }])
    await worker.stop()
  })
})

describe('outcomes refused', () => {
  it('a failure written after crash recovery took the message back is refused (the settle statement)', async () => {
    const queue = uniqueQueue('refused')
    const broker = db.broker({ logger: recordLogs().logger })
    const first = gate()
    const { handler } = firstRunWaits(first, () => {
      throw new Error('fails after it was recovered')
    })
    const work = broker.actor('work', handler, { queue, maxRetries: 0 })
    const { refused, worker, sent } = await startOne(broker, work, { queues: [queue] })
    await recoverUnderRunningHandler(broker, queue)
    first.open()
    await expectRefusal(refused, worker.id, { id: sent.id, queue, outcome: 'failure' })
    // The refused failure was not recorded: the second run succeeds, and the retry budget is intact.
    await broker.resume(queue)
    await broker.join({ queues: [queue], timeoutMs: 10_000 })
    const [row] =
      await db.sql`select state, retries, failure from iddqueue.messages where id = ${sent.id}`
    expect(row).toEqual({ state: 'done', retries: 0, failure: null })
    await worker.stop()
  })

  it('a message cancelled and recovered under a running handler: its success is refused and it stays cancelled', async () => {
    const queue = uniqueQueue('refused')
    const broker = db.broker({ logger: recordLogs().logger })
    const running = gate()
    // The handler ignores its signal, as a careless one would.
    const work = broker.actor('work', () => running.opened, { queue })
    const recovered = recordEvents(broker, 'messages:recovered')
    const { refused, worker, sent } = await startOne(broker, work, {
      queues: [queue],
      concurrency: 4,
    })
    expect((await broker.cancel(sent.id)).status).toBe('requested')
    expect(await broker.recover({ staleAfterMs: 0 })).toBe(1)
    expect(recovered.flatMap((e) => e.messages)).toEqual([
      { id: sent.id, queue, state: 'cancelled' },
    ])
    running.open()
    await expectRefusal(refused, worker.id, { id: sent.id, queue, outcome: 'success' })
    await until(() => worker.stats.settling === 0, 10_000, 'nothing left to write')
    const rows = await db.sql`select state from iddqueue.messages where id = ${sent.id}`
    expect(rows).toEqual([{ state: 'cancelled' }])
    await worker.stop()
  })

  it("a transactional run's commit refused by its guard after crash recovery is reported too", async () => {
    const queue = uniqueQueue('refused')
    const logs = recordLogs()
    const broker = db.broker({ logger: logs.logger })
    const first = gate()
    const { handler, runs } = firstRunWaits(first)
    const work = broker.actor('work', (_ctx: TransactionalContext) => handler(), {
      queue,
      transactional: true,
    })
    const { refused, worker, sent } = await startOne(broker, work, { queues: [queue] })
    await recoverUnderRunningHandler(broker, queue)
    first.open()
    await expectRefusal(refused, worker.id, { id: sent.id, queue, outcome: 'success' })
    // Its own warning says why; the batcher's is not added to it.
    expect(logs.count(/transactional commit refused/)).toBe(1)
    expect(logs.count(REFUSED)).toBe(0)
    await broker.resume(queue)
    await broker.join({ queues: [queue], timeoutMs: 10_000 })
    expect(runs()).toBe(2)
    expect(refused).toHaveLength(1)
    await worker.stop()
  })

  it('in a batch of two, the outcome of a message deleted meanwhile is refused and the other written', async () => {
    const queue = uniqueQueue('refused')
    const logs = recordLogs()
    const broker = db.broker({ logger: logs.logger })
    const both = gate()
    const work = broker.actor('work', (_i: number) => both.opened, { queue })
    const started = recordEvents(broker, 'message:started')
    const refused = recordEvents(broker, 'messages:refused')
    const worker = broker.worker({ queues: [queue], concurrency: 2, prefetch: 0 })
    await worker.start()
    const [kept, deleted] = await broker.enqueueMany([work.message(0), work.message(1)])
    await until(() => started.length === 2, 10_000, 'both handlers to start')
    // An operator deletes one row by hand while its handler runs.
    await db.sql`delete from iddqueue.messages where id = ${deleted!.id}`
    // Both handlers end in the same turn: their outcomes go out in one batch.
    both.open()
    await until(() => refused.length > 0, 10_000, 'the refused outcome to be reported')
    await until(() => worker.stats.settling === 0, 10_000, 'nothing left to write')
    expect(refused).toEqual([
      {
        workerId: worker.id,
        messages: [{ id: deleted!.id, queue, actor: 'work', outcome: 'success' }],
      },
    ])
    expect(
      logs.lines.filter((l) => REFUSED.test(l.message)).map((l) => l.message.slice(0, 40)),
    ).toEqual(['1 of 2 message outcomes refused: the mes'])
    const rows = await db.sql`select id, state from iddqueue.messages where queue = ${queue}`
    expect(rows).toEqual([{ id: kept!.id, state: 'done' }])
    await worker.stop()
  })
})
