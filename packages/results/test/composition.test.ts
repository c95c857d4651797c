import { describe, expect, it } from 'vitest'
import { ResultFailure, results } from '../src/index.js'
import { drain, rejection, setupDatabase, sleep, uniqueQueue } from './helpers.js'

const db = setupDatabase()

describe('group and pipeline results', () => {
  it('returns group results in submission order, whatever order they finished in', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('group')
    const finished: number[] = []
    const slow = broker.actor(
      'slow',
      async (n: number, ms: number) => {
        await sleep(ms)
        finished.push(n)
        return n * 10
      },
      { queue, storeResults: true },
    )
    const group = await broker
      .group([slow.message(1, 300), slow.message(2, 150), slow.message(3, 0)])
      .run()
    const waiting = group.results({ timeoutMs: 10_000 })
    await drain(broker, [queue], 3)
    expect(finished).toEqual([3, 2, 1])
    expect(await waiting).toEqual([10, 20, 30])
    expect(await group.completedCount()).toBe(3)
  })

  it('raises the ResultFailure of a failed group member', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('groupfail')
    const check = broker.actor(
      'check',
      (n: number) => {
        if (n < 0) throw new RangeError(`${n} is negative`)
        return n
      },
      { queue, storeResults: true, maxRetries: 0 },
    )
    const group = await broker.group([check.message(1), check.message(-1)]).run()
    await drain(broker, [queue])
    const error = await rejection(group.results({ block: false }))
    expect(ResultFailure.isInstance(error)).toBe(true)
    expect((error as ResultFailure).failure).toMatchObject({
      type: 'RangeError',
      message: '-1 is negative',
    })
  })

  it("returns a pipeline's result: the last step's", async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('pipe')
    const multiply = broker.actor('multiply', (factor: number, value: number) => value * factor, {
      queue,
      storeResults: true,
    })
    const label = broker.actor('label', (prefix: string, value: number) => `${prefix}${value}`, {
      queue,
      storeResults: true,
    })
    const pipeline = await broker
      .pipeline([multiply.message(3, 1), multiply.step(4), label.step('n=')])
      .run()
    const waiting = pipeline.result({ timeoutMs: 10_000 })
    await drain(broker, [queue])
    const result: string = await waiting
    expect(result).toBe('n=12')
    // Every step stored its own result.
    expect(await pipeline.messages[1]!.result({ block: false })).toBe(12)
  })

  it('stores the failure of a step for the steps after it: pipeline.result() throws instead of timing out', async () => {
    const broker = db.broker({ plugins: [results()] })
    const queue = uniqueQueue('pipefail')
    const parse = broker.actor(
      'parse',
      (text: string) => {
        const n = Number(text)
        if (Number.isNaN(n)) throw new SyntaxError(`not a number: ${text}`)
        return n
      },
      { queue, storeResults: true, maxRetries: 0 },
    )
    let doubled = 0
    const double = broker.actor(
      'double',
      (value: number) => {
        doubled++
        return value * 2
      },
      { queue, storeResults: true },
    )
    const pipeline = await broker.pipeline([parse.message('x'), double.step()]).run()
    await drain(broker, [queue])
    const started = performance.now()
    const error = await rejection(pipeline.result({ timeoutMs: 10_000 }))
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(ResultFailure.isInstance(error)).toBe(true)
    expect((error as ResultFailure).messageId).toBe(pipeline.messages[1]!.id)
    expect((error as ResultFailure).failure).toMatchObject({
      type: 'SyntaxError',
      message: 'not a number: x',
    })
    expect(doubled).toBe(0)
  })
})
