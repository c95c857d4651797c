import { describe, expect, it } from 'vitest'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

// Rows written by hand (or by another tool) into shapes iddqueue never
// writes. The worker must reject each with a failure record and carry on.
// `rejected` names the failure text expected; `done` rows carry data the
// worker does not interpret (per-message options other than a pipeline's
// state are the sender's own; the actor's options govern retries and limits).
const hostile: {
  args: string
  options: string
  retries?: number
  rejected?: string
}[] = [
  { args: '{"a":1}', options: '{}', rejected: 'args is an object, expected an array' },
  { args: '"hello"', options: '{}', rejected: 'args is a string, expected an array' },
  { args: 'null', options: '{}', rejected: 'args is null, expected an array' },
  { args: '42', options: '{}', rejected: 'args is a number, expected an array' },
  { args: '[]', options: '[1,2]', rejected: 'options is an array, expected an object' },
  { args: '[]', options: 'null', rejected: 'options is null, expected an object' },
  { args: '[]', options: '"x"', rejected: 'options is a string, expected an object' },
  {
    args: '[]',
    options: '{"pipeline":{"steps":"nope"}}',
    rejected: 'options.pipeline.id is not a string',
  },
  {
    args: '[]',
    options: '{"pipeline":{"id":"p","steps":[{"id":"s","actor":"work","queue":"q","args":3}]}}',
    rejected: 'options.pipeline.steps[0].args is a number',
  },
  {
    args: '[]',
    options: '{}',
    retries: -3,
    rejected: 'retries is -3, expected a non-negative integer',
  },
  { args: '[]', options: '{"maxRetries":"lots"}' },
  { args: '[]', options: '{"timeLimitMs":-5}' },
  { args: '[]', options: '{"onSuccess":7}' },
  { args: '[{"deep":[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}]', options: '{}' },
  { args: '[]', options: '{}', retries: 2_147_483_647 },
]

describe('rows edited by hand into invalid shapes', () => {
  it('are each settled (a failure record for the malformed ones) while the worker keeps running', async () => {
    const queue = uniqueQueue('hostile')
    const broker = db.broker()
    const seen: unknown[][] = []
    const work = broker.actor(
      'work',
      (...args: unknown[]) => {
        seen.push(args)
      },
      { queue, maxRetries: 0 },
    )
    const errors: unknown[] = []
    broker.on('worker:error', ({ error }) => errors.push(error))
    const ids = new Map<string, (typeof hostile)[number]>()
    for (const row of hostile) {
      const [inserted] = await db.sql.unsafe(
        `insert into iddqueue.messages (id, queue, actor, args, options, priority, retries)
         values (gen_random_uuid(), $1, 'work', $2::text::jsonb, $3::text::jsonb, $4, $5) returning id`,
        [queue, row.args, row.options, 0, row.retries ?? 0],
      )
      ids.set(inserted!.id, row)
    }
    // An unknown actor, and an actor name no broker accepts.
    for (const actor of ['nobody_declares_this', 'bad name; drop table x']) {
      await db.sql`insert into iddqueue.messages (id, queue, actor) values (gen_random_uuid(), ${queue}, ${actor})`
    }
    const worker = broker.worker({ queues: [queue], concurrency: 4 })
    await worker.start()
    await until(
      async () => {
        const [row] = await db.sql`select count(*)::int as n from iddqueue.messages
          where queue = ${queue} and state in ('queued', 'consumed')`
        return row?.n === 0
      },
      20_000,
      'every hostile row to be settled',
    )
    // The worker still runs a well-formed message afterwards.
    await work.send('fine')
    await until(
      () => seen.some((args) => args[0] === 'fine'),
      20_000,
      'a good message after the bad ones',
    )
    expect(worker.state).toBe('running')
    const rows = await db.sql`select id, actor, state, args, options, failure from iddqueue.messages
      where queue = ${queue}`
    for (const row of rows) {
      const given = ids.get(row.id)
      if (!given) {
        expect(row.actor === 'work' || row.state === 'rejected', JSON.stringify(row)).toBe(true)
        if (row.actor !== 'work') expect(row.failure.type).toBe('UnknownActorError')
        continue
      }
      if (given.rejected === undefined) {
        expect(row.state, JSON.stringify(row)).toBe('done')
      } else {
        expect(row.state, JSON.stringify(row)).toBe('rejected')
        expect(row.failure).toMatchObject({ type: 'InvalidPayloadError' })
        expect(row.failure.message).toContain(given.rejected)
      }
    }
    // The malformed ones never reached the handler.
    expect(seen.length).toBe(hostile.filter((h) => h.rejected === undefined).length + 1)
    expect(errors).toEqual([])
    await worker.stop()
  }, 60_000)

  it('the table refuses an unknown state, nulls and invalid JSON outright', async () => {
    const queue = uniqueQueue('hostile')
    const refused = async (statement: string) => {
      const error = await db.sql.unsafe(statement, [queue]).catch((e: unknown) => e)
      expect(error, statement).toBeInstanceOf(Error)
    }
    await refused(
      `insert into iddqueue.messages (id, queue, actor, state) values (gen_random_uuid(), $1, 'a', 'limbo')`,
    )
    await refused(
      `insert into iddqueue.messages (id, queue, actor, args) values (gen_random_uuid(), $1, 'a', null)`,
    )
    await refused(
      `insert into iddqueue.messages (id, queue, actor, options) values (gen_random_uuid(), $1, 'a', null)`,
    )
    await refused(
      `insert into iddqueue.messages (id, queue, actor, args) values (gen_random_uuid(), $1, 'a', '[1,'::jsonb)`,
    )
    await refused(
      `insert into iddqueue.messages (id, queue, actor, priority) values (gen_random_uuid(), $1, 'a', null)`,
    )
  })
})
