import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidOptionError, uuid7 } from '../src/index.js'
import { Message } from '../src/internal.js'
import { setupDatabase, states, uniqueQueue } from './helpers.js'

const db = setupDatabase()
let appSql: postgres.Sql
beforeAll(() => {
  appSql = postgres(db.url, { max: 2, onnotice: () => {} })
})
afterAll(() => appSql?.end())

const BAD = [2 ** 31, -(2 ** 31), 1.5, 1e300, Number.NaN, '1' as unknown as number]

function refusal(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  return undefined
}

function isPriorityError(error: unknown, value: number): boolean {
  return (
    InvalidOptionError.isInstance(error) &&
    error.option === 'priority' &&
    Object.is(error.value, value) &&
    /Invalid priority/.test(error.message)
  )
}

describe('a message-level priority PostgreSQL cannot store', () => {
  it.each(BAD)('%s is refused by broker.message() and messageWithOptions', (priority) => {
    const broker = db.broker()
    const add = broker.actor('add', (a: number, b: number) => a + b)
    expect(
      isPriorityError(
        refusal(() => broker.message('add', [1, 2], { priority })),
        priority,
      ),
    ).toBe(true)
    expect(
      isPriorityError(
        refusal(() => add.messageWithOptions({ args: [1, 2], priority })),
        priority,
      ),
    ).toBe(true)
  })

  it.each(BAD)(
    '%s on a message built elsewhere is refused by enqueue, enqueueMany and group().run() before any SQL',
    async (priority) => {
      const broker = db.broker()
      const queue = uniqueQueue()
      const stray = () => new Message(uuid7(), 'add', queue, [1, 2], priority, {})
      const refused = (error: unknown) => isPriorityError(error, priority)
      await expect(broker.enqueue(stray())).rejects.toSatisfy(refused)
      await expect(broker.enqueueMany([stray()])).rejects.toSatisfy(refused)
      await expect(broker.group([stray()]).run()).rejects.toSatisfy(refused)
      expect(await states(db.sql, { queue })).toEqual({})
    },
  )

  it("leaves the caller's transaction usable", async () => {
    const broker = db.broker()
    const queue = uniqueQueue()
    const stray = new Message(uuid7(), 'add', queue, [1, 2], 2 ** 31, {})
    const after = await appSql.begin(async (tx) => {
      await expect(broker.enqueue(stray, { transaction: tx })).rejects.toSatisfy((error) =>
        InvalidOptionError.isInstance(error),
      )
      const [row] = await tx`select 1 as ok`
      return row?.ok
    })
    expect(after).toBe(1)
  })
})
