import { waitFor } from '@iddqueue/testing'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import { Kysely } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type IddqueueDatabase, migrate, namespace, toExecutor } from '../src/index.js'
import { createQueryBuilder, NamespacePlugin } from '../src/kysely.js'

const database = useTestDatabase()
let sql: postgres.Sql
const a = namespace({ schema: 'shared', prefix: 'a_' })
const b = namespace({ schema: 'shared', prefix: 'b_' })

beforeAll(async () => {
  sql = postgres(database.url, { max: 4, onnotice: () => {} })
  await Promise.all([migrate(sql, { namespace: a }), migrate(sql, { namespace: b })])
})
afterAll(() => sql.end())

describe('two namespaces in one database', () => {
  it('have separate tables', async () => {
    const tables = await sql`select tablename from pg_tables where schemaname = 'shared' order by 1`
    expect(tables.map((t) => t.tablename)).toEqual([
      'a_attempts',
      'a_deduplication',
      'a_messages',
      'a_migrations',
      'a_queue_control',
      'a_workers',
      'b_attempts',
      'b_deduplication',
      'b_messages',
      'b_migrations',
      'b_queue_control',
      'b_workers',
    ])
    const qa = createQueryBuilder(a)
    const insert = qa
      .insertInto('messages')
      .values({
        id: crypto.randomUUID(),
        queue: 'q',
        actor: 'x',
        args: '[1]',
        options: '{}',
      } as never)
      .compile()
    await toExecutor(sql).query(insert.sql, insert.parameters)
    const [inA] = await sql`select count(*)::int as n from shared.a_messages`
    const [inB] = await sql`select count(*)::int as n from shared.b_messages`
    expect([inA?.n, inB?.n]).toEqual([1, 0])
  })

  it('have separate channels: a notification in one never reaches the other', async () => {
    const received: string[] = []
    const la = await sql.listen(a.channel('wake'), (payload) => received.push(`a:${payload}`))
    const lb = await sql.listen(b.channel('wake'), (payload) => received.push(`b:${payload}`))
    await sql`select pg_notify(${a.channel('wake')}, 'default')`
    // Notifications of one session arrive in order: once b's marker is here,
    // a wrongly routed first one would have come before it.
    await sql`select pg_notify(${b.channel('wake')}, 'marker')`
    await waitFor(() => received.includes('b:marker'), {
      timeoutMs: 10_000,
      message: 'the marker on b',
    })
    await la.unlisten()
    await lb.unlisten()
    expect(received).toEqual(['a:default', 'b:marker'])
  })

  it('have separate advisory locks', async () => {
    const key = (ns: typeof a) => ns.lockKey('purge').toString()
    await sql.begin(async (tx) => {
      const [held] = await tx`select pg_try_advisory_xact_lock(${key(a)}::bigint) as ok`
      expect(held?.ok).toBe(true)
      const [other] = await sql`select pg_try_advisory_lock(${key(b)}::bigint) as ok`
      const [same] = await sql`select pg_try_advisory_lock(${key(a)}::bigint) as ok`
      expect([other?.ok, same?.ok]).toEqual([true, false])
      await sql`select pg_advisory_unlock_all()`
    })
  })
})

describe('NamespacePlugin', () => {
  it('maps logical tables to the namespace in compiled queries', () => {
    const query = createQueryBuilder(b)
      .selectFrom('messages')
      .innerJoin('workers', 'workers.id', 'messages.worker_id')
      .select(['messages.id', 'workers.host'])
      .where('messages.state', '=', 'consumed')
      .compile()
    expect(query.sql).toBe(
      'select "shared"."b_messages"."id", "shared"."b_workers"."host" from "shared"."b_messages" inner join "shared"."b_workers" on "shared"."b_workers"."id" = "shared"."b_messages"."worker_id" where "shared"."b_messages"."state" = $1',
    )
  })

  it('runs on a real Kysely instance against the namespace', async () => {
    const db = new Kysely<IddqueueDatabase>({
      dialect: new PostgresJSDialect({ postgres: sql }),
    }).withPlugin(new NamespacePlugin(a))
    await db.insertInto('queue_control').values({ queue: 'emails', paused: true }).execute()
    const rows = await db.selectFrom('queue_control').select(['queue', 'paused']).execute()
    expect(rows).toEqual([{ queue: 'emails', paused: true }])
    const [inB] = await sql`select count(*)::int as n from shared.b_queue_control`
    expect(inB?.n).toBe(0)
  })
})
