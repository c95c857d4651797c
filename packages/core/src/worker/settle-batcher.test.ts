import { describe, expect, it } from 'vitest'
import type { BrokerContext } from '../runtime/broker-context.js'
import { type BrokerEvents, EventBus } from '../runtime/events.js'
import type { SettleEntry } from './settle-batch.js'
import { SettleBatcher } from './settle-batcher.js'

/**
 * The batcher's collaborators without a database: an executor that records
 * each statement, fails the ids a test names, and answers as the guarded
 * statements do when a message is no longer this worker's (`refuseIds`:
 * the ack returns their ids, the settle statement leaves them out). Asked
 * which messages this worker settled already, it names `doneByWorker`.
 * `lostOnce` makes the first write lose its connection after committing.
 * The statement texts are the batcher's business only as labels here.
 */
function harness(
  options: {
    failIds?: Set<string>
    refuseIds?: Set<string>
    doneByWorker?: Set<string>
    lostOnce?: boolean
  } = {},
) {
  const written: string[][] = []
  const logged: string[] = []
  const refuse = options.refuseIds ?? new Set<string>()
  let lose = options.lostOnce === true
  const query = async (sql: string, params: unknown[]) => {
    const ids = params[0] as string[]
    if (ids.some((id) => options.failIds?.has(id))) throw new Error('bad row')
    written.push([sql, ...ids])
    if (lose) {
      lose = false
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })
    }
    if (sql === 'ack') return ids.filter((id) => refuse.has(id)).map((id) => ({ id }))
    if (sql === 'settle') return ids.filter((id) => !refuse.has(id)).map((id) => ({ id }))
    return ids.filter((id) => options.doneByWorker?.has(id)).map((id) => ({ id, state: 'done' }))
  }
  const logger = {
    warn: (text: string) => logged.push(text),
    error: (text: string) => logged.push(text),
    info: () => {},
    debug: () => {},
  }
  const events = new EventBus(logger)
  const refused: BrokerEvents['messages:refused'][] = []
  events.on('messages:refused', (event) => refused.push(event))
  const core = {
    middleware: [],
    actors: new Map(),
    ns: { table: (name: string) => name },
    statements: { ack: 'ack', settle: 'settle', wakeQueues: 'wake', wakeChannel: 'w' },
    executor: { query, transaction: () => Promise.reject(new Error('no transaction')) },
    logger,
    events,
  } as unknown as BrokerContext
  const settled: string[] = []
  const batcher = new SettleBatcher(core, 'worker-1', 1_000, (entries) =>
    settled.push(...entries.map((e) => e.message.id)),
  )
  return { batcher, written, settled, logged, refused }
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

  it('reports the outcomes the ack refused: one warning and one messages:refused event for the batch', async () => {
    const { batcher, written, settled, logged, refused } = harness({
      refuseIds: new Set(['2', '4']),
    })
    for (const id of ['1', '2', '3', '4']) batcher.add(success(id))
    await batcher.drain()
    // One ack, not retried, and no other statement: this worker never wrote them before.
    expect(written).toEqual([['ack', '1', '2', '3', '4']])
    expect(settled).toEqual(['1', '2', '3', '4'])
    expect(logged).toEqual([expect.stringMatching(/^2 of 4 message outcomes refused: /)])
    expect(refused).toEqual([
      {
        workerId: 'worker-1',
        messages: ['2', '4'].map((id) => ({ id, queue: 'q', actor: 'a', outcome: 'success' })),
      },
    ])
  })

  it('reports the outcomes the settle statement refused, of any kind', async () => {
    const { batcher, logged, refused } = harness({ refuseIds: new Set(['f']) })
    batcher.add(success('s'))
    batcher.add({ ...success('f'), outcome: { kind: 'failure', error: new Error('x') } })
    await batcher.drain()
    expect(logged).toEqual([expect.stringMatching(/^1 of 2 message outcomes refused: /)])
    expect(refused.map((e) => e.messages)).toEqual([
      [{ id: 'f', queue: 'q', actor: 'a', outcome: 'failure' }],
    ])
  })

  it('after a lost connection, an outcome the first write committed is not reported refused; one it did not is', async () => {
    // The first ack committed '1' and '2' but its answer was lost; meanwhile
    // '2' was recovered and finished by another worker, so this worker did not.
    const { batcher, written, refused } = harness({
      lostOnce: true,
      refuseIds: new Set(['1', '2']),
      doneByWorker: new Set(['1']),
    })
    batcher.add(success('1'))
    batcher.add(success('2'))
    await batcher.drain()
    expect(written.map(([sql]) => sql)).toEqual([
      'ack',
      'ack',
      expect.stringMatching(/^select m\.id, m\.state/),
    ])
    expect(refused.map((e) => e.messages.map((m) => m.id))).toEqual([['2']])
  })

  it('reports nothing when every outcome was written', async () => {
    const { batcher, written, logged, refused } = harness()
    for (const id of ['1', '2']) batcher.add(success(id))
    batcher.add({ ...success('3'), outcome: { kind: 'cancelled' } })
    await batcher.drain()
    expect(written.map(([sql]) => sql)).toEqual(['settle'])
    expect(logged).toEqual([])
    expect(refused).toEqual([])
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
