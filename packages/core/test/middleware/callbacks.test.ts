import { describe, expect, it } from 'vitest'
import {
  type ActorContext,
  consoleLogger,
  type EncodedMessage,
  type SettleEvent,
} from '../../src/index.js'
import { uniqueQueue, until } from '../helpers.js'
import { db, FAST, messageRow, settleGate, stateOf } from './middleware-fixture.js'

describe('callbacks', () => {
  it('onSuccess receives (message, result) once per success; onFailure (message, { type, message }) on every failed attempt', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const successes: [EncodedMessage, unknown][] = []
    const failures: [EncodedMessage, { type: string; message: string }][] = []
    broker.actor(
      'ok_cb',
      (message: EncodedMessage, result: unknown) => {
        successes.push([message, result])
      },
      { queue },
    )
    broker.actor(
      'fail_cb',
      (message: EncodedMessage, error: { type: string; message: string }) => {
        failures.push([message, error])
      },
      { queue },
    )
    const work = broker.actor(
      'work',
      (n: number, ctx: ActorContext) => {
        if (n === 3) throw new RangeError(`bad ${ctx.attempt}`)
        if (n === 2 && ctx.attempt === 1) throw new Error('first try')
        return { doubled: n * 2 }
      },
      { queue, onSuccess: 'ok_cb', onFailure: 'fail_cb', maxRetries: 2, ...FAST },
    )
    const [one, two, three] = [await work.send(1), await work.send(2), await work.send(3)]
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()

    const byId = (id: string) => (entry: [EncodedMessage, unknown]) => entry[0].id === id
    expect(successes).toHaveLength(2)
    expect(successes.filter(byId(one.id))).toEqual([
      [expect.objectContaining({ id: one.id, actor: 'work', queue, args: [1] }), { doubled: 2 }],
    ])
    expect(successes.filter(byId(two.id))).toEqual([
      [expect.objectContaining({ id: two.id, args: [2] }), { doubled: 4 }],
    ])
    expect(failures).toHaveLength(4)
    expect(failures.filter(byId(two.id)).map((f) => f[1])).toEqual([
      { type: 'Error', message: 'first try' },
    ])
    expect(failures.filter(byId(three.id)).map((f) => f[1])).toEqual([
      { type: 'RangeError', message: 'bad 1' },
      { type: 'RangeError', message: 'bad 2' },
      { type: 'RangeError', message: 'bad 3' },
    ])
    expect(failures.filter(byId(three.id))[0]![0]).toMatchObject({ actor: 'work', args: [3] })
    const rows = await db.sql`select actor, state, count(*)::int as n from iddqueue.messages
      where queue = ${queue} group by actor, state order by actor, state`
    expect(rows).toEqual([
      { actor: 'fail_cb', state: 'done', n: 4 },
      { actor: 'ok_cb', state: 'done', n: 2 },
      { actor: 'work', state: 'done', n: 2 },
      { actor: 'work', state: 'rejected', n: 1 },
    ])
  })

  it('are written in the same transaction as the outcome: rows exist exactly when it is recorded', async () => {
    const isFor = (id: () => string | undefined) => (event: SettleEvent) =>
      event.settled.some((s) => s.message.id === id())
    let successId: string | undefined
    let failureId: string | undefined
    const successGate = settleGate(isFor(() => successId))
    const failureGate = settleGate(isFor(() => failureId))
    const broker = db.broker({
      middleware: [successGate.middleware, failureGate.middleware],
      logger: consoleLogger('silent'),
    })
    const queue = uniqueQueue()
    let okCalls = 0
    let failCalls = 0
    broker.actor(
      'ok_cb',
      () => {
        okCalls++
      },
      { queue },
    )
    broker.actor(
      'fail_cb',
      () => {
        failCalls++
      },
      { queue },
    )
    const work = broker.actor(
      'work',
      (fail: boolean, ctx: ActorContext) => {
        if (fail && ctx.attempt === 1) throw new Error('retry me')
        return 'ok'
      },
      { queue, onSuccess: 'ok_cb', onFailure: 'fail_cb', maxRetries: 1, ...FAST },
    )
    const snapshot = async (id: string) => {
      const [row] = await db.sql`select
          (select state from iddqueue.messages where id = ${id}) as state,
          (select retries from iddqueue.messages where id = ${id}) as retries,
          (select count(*)::int from iddqueue.messages
            where queue = ${queue} and actor in ('ok_cb', 'fail_cb')) as callbacks`
      return row
    }
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()

    successId = (await work.send(false)).id
    await successGate.entered
    try {
      expect(await snapshot(successId)).toEqual({ state: 'consumed', retries: 0, callbacks: 0 })
    } finally {
      successGate.release()
    }
    await until(async () => (await stateOf(successId!)) === 'done', 5_000, 'the success')
    expect((await snapshot(successId))?.callbacks).toBe(1)

    failureId = (await work.send(true)).id
    await failureGate.entered
    try {
      expect(await snapshot(failureId)).toEqual({ state: 'consumed', retries: 0, callbacks: 1 })
    } finally {
      failureGate.release()
    }
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    // One fail_cb for the failed attempt, one ok_cb for each success: nothing twice.
    expect(await snapshot(failureId)).toEqual({ state: 'done', retries: 1, callbacks: 3 })
    expect([okCalls, failCalls]).toEqual([2, 1])
  })

  it('a result that is not JSON (a BigInt) rejects the message, naming the path; the worker keeps going', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    let okCalls = 0
    broker.actor(
      'ok_cb',
      () => {
        okCalls++
      },
      { queue },
    )
    const huge = broker.actor('huge', () => 10n ** 20n, { queue, onSuccess: 'ok_cb', ...FAST })
    const plain = broker.actor('plain', () => 'fine', { queue })
    const message = await huge.send()
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    const after = await plain.send()
    await broker.join({ timeoutMs: 5_000 })
    expect(worker.state).toBe('running')
    await worker.stop()

    const row = await messageRow(message.id)
    expect(row).toMatchObject({
      state: 'rejected',
      retries: 0,
      attempts: 1,
      failure: { type: 'InvalidPayloadError' },
    })
    expect(row.failure.message).toMatch(
      /^The result of actor huge cannot be sent to its onSuccess actor ok_cb \(as args\[1\]\): .*args\[1\] is a BigInt/,
    )
    expect(okCalls).toBe(0)
    expect(await stateOf(after.id)).toBe('done')
  })

  it('onFailure gets the same sanitised type and text as the stored failure, and the attempt is still retried', async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const reports: { type: string; message: string }[] = []
    broker.actor(
      'fail_cb',
      (_message: EncodedMessage, error: { type: string; message: string }) => {
        reports.push(error)
      },
      { queue },
    )
    const bad = broker.actor(
      'bad',
      (kind: string, ctx: ActorContext) => {
        if (ctx.attempt > 1) return 'ok'
        if (kind === 'nul') throw new Error('nul \u0000 and lone \ud800 here')
        throw { code: 42 }
      },
      { queue, onFailure: 'fail_cb', maxRetries: 1, ...FAST },
    )
    const nul = await bad.send('nul')
    const object = await bad.send('object')
    const worker = broker.worker({ pollIntervalMs: 50 })
    await worker.start()
    await broker.join({ timeoutMs: 5_000 })
    await worker.stop()
    expect(reports).toHaveLength(2)
    expect(reports).toContainEqual({ type: 'Error', message: 'nul \ufffd and lone \ufffd here' })
    expect(reports).toContainEqual({ type: 'object', message: '{"code":42}' })
    expect(await messageRow(nul.id)).toMatchObject({ state: 'done', retries: 1 })
    expect(await messageRow(object.id)).toMatchObject({ state: 'done', retries: 1 })
  })
})
