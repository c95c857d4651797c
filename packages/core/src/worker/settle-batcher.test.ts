import { describe, expect, it } from 'vitest'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { SettleEntry } from './settle-batch.js'
import { SettleBatcher } from './settle-batcher.js'

/**
 * The batcher's collaborators without a database: an executor that records
 * each statement and fails the ids a test names. The statement texts are
 * the batcher's business only as labels here.
 */
function harness(options: { failIds?: Set<string> } = {}) {
  const written: string[][] = []
  const logged: string[] = []
  const query = async (sql: string, params: unknown[]) => {
    const ids = params[0] as string[]
    if (ids.some((id) => options.failIds?.has(id))) throw new Error('bad row')
    written.push([sql, ...ids])
    return []
  }
  const core = {
    middleware: [],
    actors: new Map(),
    statements: { ack: 'ack', settle: 'settle', wakeQueues: 'wake', wakeChannel: 'w' },
    executor: { query, transaction: () => Promise.reject(new Error('no transaction')) },
    logger: {
      warn: (text: string) => logged.push(text),
      error: (text: string) => logged.push(text),
      info: () => {},
      debug: () => {},
    },
  } as unknown as BrokerContext
  const settled: string[] = []
  const batcher = new SettleBatcher(core, 'worker-1', 1_000, (entries) =>
    settled.push(...entries.map((e) => e.message.id)),
  )
  return { batcher, written, settled, logged }
}

const success = (id: string): SettleEntry =>
  ({
    message: { id, actor: 'a', queue: 'q' },
    outcome: { kind: 'success', result: undefined },
    attempt: 1,
    followUps: [],
  }) as unknown as SettleEntry

describe('SettleBatcher', () => {
  it('writes outcomes added together in one statement', async () => {
    const { batcher, written, settled } = harness()
    for (const id of ['1', '2', '3']) batcher.add(success(id))
    await batcher.drain()
    expect(written).toEqual([['ack', '1', '2', '3']])
    expect(settled).toEqual(['1', '2', '3'])
    expect(batcher.pending).toBe(0)
  })

  it('after a failed batch, retries entries one by one so one bad entry cannot hold back the others', async () => {
    const { batcher, written, settled } = harness({ failIds: new Set(['bad']) })
    for (const id of ['1', 'bad', '3']) batcher.add(success(id))
    await batcher.drain()
    // The good entries got through on their own; the bad one never did.
    expect(settled.sort()).toEqual(['1', '3'])
    expect(written.every((statement) => !statement.includes('bad'))).toBe(true)
    expect(written.some((statement) => statement.length === 2)).toBe(true)
  })

  it('drops an entry after repeated failures, logging it, and stays usable', async () => {
    const { batcher, settled, logged } = harness({ failIds: new Set(['bad']) })
    batcher.add(success('bad'))
    await batcher.drain()
    expect(batcher.pending).toBe(0)
    expect(logged).toContain('dropping an outcome that cannot be written')
    batcher.add(success('after'))
    await batcher.drain()
    expect(settled).toEqual(['after'])
  })

  it('abandon() forgets what is pending and releases drain()', async () => {
    const { batcher } = harness({ failIds: new Set(['stuck']) })
    batcher.add(success('stuck'))
    const drained = batcher.drain()
    batcher.abandon()
    await drained
    expect(batcher.pending).toBe(0)
  })
})
