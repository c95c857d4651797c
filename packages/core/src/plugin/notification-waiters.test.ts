import { describe, expect, it } from 'vitest'
import { consoleLogger } from '../runtime/logger.js'
import type { NotificationWaiter } from './notification-waiter.js'
import { NotificationWaiters } from './notification-waiters.js'

/** A context whose subscription delivers payloads by hand: the routing under test, without PostgreSQL. */
function channel(listening = true) {
  let deliver: (payload: string) => void = () => {}
  let subscriptions = 0
  const context = {
    listening,
    subscribe: async (_channel: string, handler: (payload: string) => void) => {
      subscriptions++
      deliver = handler
      return async () => {}
    },
  }
  return {
    context,
    notify: (payload: string) => deliver(payload),
    subscriptions: () => subscriptions,
  }
}

const logger = consoleLogger('silent')
const ONE_HOUR = 3_600_000

/** Whether `waiter.next()` resolves before the test's next macrotask: woken, not timed out. */
async function wokenNow(waiter: NotificationWaiter): Promise<boolean> {
  const woke = waiter.next(ONE_HOUR).then(() => true)
  const later = new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))
  return Promise.race([woke, later])
}

describe('NotificationWaiters', () => {
  it('subscribes once, and wakes every waiter of each key the route names', async () => {
    const { context, notify, subscriptions } = channel()
    const waiters = new NotificationWaiters(context, 'c', logger, {
      onNotification: (payload, all) => {
        for (const id of payload.split(',')) all.wakeAll(id)
      },
    })
    const [a1, a2, b] = await Promise.all([waiters.add('a'), waiters.add('a'), waiters.add('b')])
    expect(subscriptions()).toBe(1)
    expect([a1.notified, a2.notified, b.notified]).toEqual([true, true, true])
    const blocked = [a1.next(ONE_HOUR), a2.next(ONE_HOUR)]
    expect([a1.blocked, a2.blocked, b.blocked]).toEqual([true, true, false])
    notify('a,x')
    await Promise.all(blocked)
    expect(b.pending).toBe(false)
    // A signal that comes between two waits is kept for the next one.
    notify('b')
    expect(b.pending).toBe(true)
    expect(await wokenNow(b)).toBe(true)
    expect(b.pending).toBe(false)
  })

  it('wakeOne signals a blocked waiter first, and hands a leaving waiter’s unused signal on', async () => {
    const { context, notify } = channel()
    const waiters = new NotificationWaiters(context, 'c', logger, {
      onNotification: (key, all) => all.wakeOne(key),
      handOff: true,
    })
    const first = await waiters.add('k')
    const second = await waiters.add('k')
    const waiting = second.next(ONE_HOUR)
    notify('k')
    await waiting
    expect(first.pending).toBe(false)
    // first gets the next signal, then leaves without using it: second gets it.
    notify('k')
    expect(first.pending).toBe(true)
    waiters.remove(first)
    expect(await wokenNow(second)).toBe(true)
  })

  it('without handOff a leaving waiter’s signal goes nowhere', async () => {
    const { context, notify } = channel()
    const waiters = new NotificationWaiters(context, 'c', logger, {
      onNotification: (key, all) => all.wakeOne(key),
    })
    const first = await waiters.add('k')
    const second = await waiters.add('k')
    notify('k')
    expect([first.pending, second.pending]).toEqual([true, false])
    waiters.remove(first)
    expect(second.pending).toBe(false)
  })

  it('makes unnotified waiters, which time out, when the broker does not listen', async () => {
    const { context, subscriptions } = channel(false)
    const waiters = new NotificationWaiters(context, 'c', logger, {
      onNotification: () => {},
    })
    const waiter = await waiters.add('k')
    expect(waiter.notified).toBe(false)
    expect(subscriptions()).toBe(0)
    await waiter.next(1) // the timeout is what ends this wait
    expect(waiter.blocked).toBe(false)
  })
})
