import { describe, expect, it } from 'vitest'
import type { IddqueuePlugin, PluginContext, SettleEvent } from '../src/index.js'
import { setupDatabase, uniqueQueue } from './helpers.js'

const db = setupDatabase()

describe('Middleware.settleFor and PluginContext.enqueueMany', () => {
  it('runs the settle hook only for batches holding a marked message, and sends in the settle transaction', async () => {
    const batches: string[][] = []
    let context: PluginContext | undefined
    const follower: IddqueuePlugin = {
      name: 'follower',
      setup(ctx) {
        context = ctx
        return undefined
      },
      middleware: {
        settleFor: (message) => message.options.follow === true,
        async settle(event: SettleEvent) {
          batches.push(event.settled.map((s) => String(s.message.args[0])))
          const marked = event.settled.filter((s) => s.message.options.follow === true)
          if (marked.length > 0 && context) {
            await context.enqueueMany(
              marked.map((s) => after.message(`after-${String(s.message.args[0])}`)),
              { transaction: event.executor },
            )
          }
        },
      },
    }
    const broker = db.broker({ plugins: [follower] })
    const queue = uniqueQueue()
    const ran: string[] = []
    const work = broker.actor('work', (label: string) => void ran.push(label), { queue })
    const after = broker.actor('after', (label: string) => void ran.push(label), { queue })
    await broker.enqueueMany([work.message('plain')])
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 20 })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    // A batch of unmarked successes never reaches the hook.
    expect(batches).toEqual([])
    const marked = work.message('marked').with({ options: { follow: true } })
    await broker.enqueue(marked)
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await worker.stop()
    expect(batches.flat()).toContain('marked')
    expect(ran.sort()).toEqual(['after-marked', 'marked', 'plain'])
    // An executor outside a transaction is still refused as a transaction.
    await expect(
      broker.enqueueMany([after.message('x')], { transaction: context!.executor }),
    ).rejects.toThrow(/not a transaction/)
  })
})
