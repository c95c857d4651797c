import { describe, expect, it } from 'vitest'
import { InvalidOptionError, uuid7 } from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

describe('reschedule and runNow', () => {
  it('change a queued message, and report consumed, done and missing ones', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('resched')
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const ran: string[] = []
    const job = broker.actor(
      'job',
      async (label: string) => {
        ran.push(label)
        if (label === 'slow') await gate
      },
      { queue },
    )
    const later = await job.sendWithOptions({ args: ['later'], delayMs: 3_600_000 })

    const eta = new Date(Date.now() + 7_200_000)
    const moved = await broker.reschedule(later.id, { eta, priority: 3 })
    expect(moved).toEqual({ status: 'rescheduled', state: 'queued', eta, priority: 3 })
    const delayed = await broker.reschedule(later.id, { delayMs: 600_000 })
    expect(delayed.status).toBe('rescheduled')
    expect(delayed.priority).toBe(3)
    expect(delayed.eta!.getTime()).toBeLessThan(eta.getTime())

    expect((await broker.runNow(later.id)).status).toBe('promoted')
    expect((await broker.runNow(later.id)).status).toBe('ready')
    const info = await broker.getMessage(later.id)
    expect(info).toMatchObject({ state: 'queued', priority: 3, attempts: 0, progress: null })

    const slow = await job.send('slow')
    const worker = broker.worker({ queues: [queue], concurrency: 2, prefetch: 0 })
    await worker.start()
    await until(() => ran.includes('slow') && ran.includes('later'), 10_000, 'both to start')
    expect(await broker.reschedule(slow.id, { priority: 1 })).toMatchObject({
      status: 'not-queued',
      state: 'consumed',
    })
    expect(await broker.runNow(slow.id)).toMatchObject({ status: 'not-queued', state: 'consumed' })
    await until(
      async () => (await broker.getMessage(later.id))?.state === 'done',
      10_000,
      'later to finish',
    )
    expect(await broker.reschedule(later.id, { delayMs: 0 })).toMatchObject({
      status: 'not-queued',
      state: 'done',
    })
    expect(await broker.runNow(later.id)).toMatchObject({ status: 'not-queued', state: 'done' })
    release()
    await broker.join({ queues: [queue] })
    await worker.stop()

    const missing = uuid7()
    expect(await broker.reschedule(missing, { priority: 1 })).toEqual({
      status: 'missing',
      state: null,
    })
    expect(await broker.runNow(missing)).toEqual({ status: 'missing', state: null })
    expect(await broker.getMessage(missing)).toBeUndefined()
  })

  it('wakes an idle worker when a delayed message is promoted', async () => {
    const broker = db.broker()
    const queue = uniqueQueue('promote')
    let ran = false
    const job = broker.actor(
      'job',
      () => {
        ran = true
      },
      { queue },
    )
    const message = await job.sendWithOptions({ args: [], delayMs: 3_600_000 })
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    expect((await broker.runNow(message.id)).status).toBe('promoted')
    await until(() => ran, 20_000, 'the promoted message to run')
    await worker.stop()
  })

  it('refuses bad input with a typed error before any SQL', async () => {
    const broker = db.broker()
    const id = uuid7()
    await expect(broker.reschedule('nope', { priority: 1 })).rejects.toThrow(InvalidOptionError)
    await expect(broker.reschedule(id, {})).rejects.toThrow(/needs eta, delayMs or priority/)
    await expect(broker.reschedule(id, { eta: Date.now(), delayMs: 5 })).rejects.toThrow(
      /delayMs or eta, not both/,
    )
    await expect(broker.reschedule(id, { priority: 1.5 })).rejects.toThrow(/Invalid priority 1\.5/)
    await expect(broker.reschedule(id, { when: 1 } as never)).rejects.toThrow(
      /Unknown reschedule option/,
    )
    await expect(broker.runNow('42')).rejects.toThrow(InvalidOptionError)
    await expect(broker.getMessage('42')).rejects.toThrow(InvalidOptionError)
  })
})
