import { createBroker } from '@iddqueue/core'
import { generateGrantsSql } from '@iddqueue/schema'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { coordination } from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

// Roles are cluster-wide: unique names, dropped after the file.
const suffix = crypto.randomUUID().slice(0, 8)
const roles = { producer: `iddq_cproducer_${suffix}`, worker: `iddq_cworker_${suffix}` } as const
const password = crypto.randomUUID()

function urlAs(role: string): string {
  const url = new URL(db.url)
  url.username = role
  url.password = password
  return url.toString()
}

beforeAll(async () => {
  // The plugin's tables exist before the grants, as the docs say to apply them.
  const owner = db.broker({ plugins: [coordination({ purgeIntervalMs: false })] })
  await owner.ready()
  await owner.close()
  const [{ current_database: database }] = (await db.sql`select current_database()`) as never as [
    { current_database: string },
  ]
  for (const [mode, role] of Object.entries(roles)) {
    await db.sql.unsafe(`create role "${role}" login password '${password}'`)
    await db.sql.unsafe(`grant connect on database "${database}" to "${role}"`)
    await db.sql.unsafe(generateGrantsSql({ role, mode: mode as keyof typeof roles }))
  }
})

afterAll(async () => {
  for (const role of Object.values(roles)) {
    await db.sql.unsafe(`drop owned by "${role}"`).catch(() => {})
    await db.sql.unsafe(`drop role if exists "${role}"`)
  }
})

describe('generateGrantsSql with the coordination plugin', () => {
  it('gives a worker every coordination table, and a producer only what sending a group needs', async () => {
    const tables =
      await db.sql`select c.relname, has_table_privilege(${roles.worker}, c.oid, 'select, insert, update, delete') as worker,
        has_table_privilege(${roles.producer}, c.oid, 'insert') as producer_inserts
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'iddqueue' and c.relkind in ('r', 'p') and c.relname like 'coordination%'
      order by c.relname`
    expect(tables.length).toBeGreaterThanOrEqual(9)
    expect(tables.filter((t) => !t.worker).map((t) => t.relname)).toEqual([])
    expect(tables.filter((t) => t.producer_inserts).map((t) => t.relname)).toEqual([
      'coordination_groups',
    ])
  })

  it('a producer sends a group and a worker role runs it under a concurrency limit with its callback', async () => {
    const queue = uniqueQueue('cgrants')
    const producerCoord = coordination({ purgeIntervalMs: false })
    const workerCoord = coordination({ purgeIntervalMs: false })
    // Neither role may migrate: the brokers check the schema and find it current.
    const producer = createBroker({ url: urlAs(roles.producer), plugins: [producerCoord] })
    const workerBroker = createBroker({ url: urlAs(roles.worker), plugins: [workerCoord] })
    try {
      const ran: string[] = []
      const declare = (broker: typeof producer) => ({
        member: broker.actor('member', (label: string) => void ran.push(label), {
          queue,
          concurrency: { key: (label: string) => label.slice(0, 1), limit: 1 },
        }),
        done: broker.actor('done', (name: string) => void ran.push(`done:${name}`), { queue }),
      })
      const sending = declare(producer)
      declare(workerBroker)
      const errors: unknown[] = []
      workerBroker.on('worker:error', ({ error }) => errors.push(error))
      await producer.ready()
      await producerCoord
        .group(['a1', 'a2', 'b1'].map((label) => sending.member.message(label)))
        .run({ onCompletion: sending.done.message('g') })
      const worker = workerBroker.worker({ queues: [queue], pollIntervalMs: 50 })
      await worker.start()
      await until(() => ran.includes('done:g'), 20_000, 'the group callback')
      await worker.stop()
      expect(errors).toEqual([])
      expect(ran.slice(0, 3).sort()).toEqual(['a1', 'a2', 'b1'])
      const [row] = await db.sql`select count(*)::int as n from iddqueue.messages
        where queue = ${queue} and state = 'done'`
      expect(row?.n).toBe(4)
    } finally {
      await producer.close()
      await workerBroker.close()
    }
  })
})
