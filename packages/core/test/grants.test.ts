import { generateGrantsSql, InvalidIdentifierError, InvalidOptionError } from '@iddqueue/schema'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createBroker } from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

// Roles are cluster-wide: unique names, dropped after the file.
const suffix = crypto.randomUUID().slice(0, 8)
const roles = {
  producer: `iddq_producer_${suffix}`,
  worker: `iddq_worker_${suffix}`,
  admin: `iddq_admin_${suffix}`,
} as const
const clients: postgres.Sql[] = []
const password = crypto.randomUUID()

function urlAs(role: string): string {
  const url = new URL(db.url)
  url.username = role
  url.password = password
  return url.toString()
}

function sqlAs(role: string): postgres.Sql {
  const sql = postgres(urlAs(role), { max: 1, onnotice: () => {} })
  clients.push(sql)
  return sql
}

async function refused(sql: postgres.Sql, statement: string): Promise<void> {
  const error = await sql.unsafe(statement).catch((e: unknown) => e)
  expect((error as { code?: string })?.code, `${statement} should be refused`).toBe('42501')
}

beforeAll(async () => {
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
  await Promise.all(clients.map((c) => c.end({ timeout: 1 })))
  for (const role of Object.values(roles)) {
    await db.sql.unsafe(`drop owned by "${role}"`).catch(() => {})
    await db.sql.unsafe(`drop role if exists "${role}"`)
  }
})

describe('generateGrantsSql', () => {
  it('refuses a bad role or mode with a typed error, before any SQL', () => {
    expect(() => generateGrantsSql({ role: '', mode: 'producer' })).toThrow(InvalidIdentifierError)
    expect(() => generateGrantsSql({ role: 'x$iddqueue$y', mode: 'producer' })).toThrow(
      InvalidIdentifierError,
    )
    expect(() => generateGrantsSql({ role: 'x', mode: 'root' as never })).toThrow(
      InvalidOptionError,
    )
    // A quote in a role name stays inside the identifier.
    expect(generateGrantsSql({ role: 'a"b', mode: 'worker' })).toContain('"a""b"')
  })

  it('a producer sends (with deduplication) and reads states, and nothing more', async () => {
    const queue = uniqueQueue('grants')
    const producer = createBroker({ url: urlAs(roles.producer) })
    try {
      const actor = producer.actor('greet', (_name: string) => {}, { queue })
      const sent = await actor.send('ada')
      await actor.sendWithOptions({ args: ['ada'], dedupKey: 'once', dedupTtlMs: 60_000 })
      const again = await actor.sendWithOptions({
        args: ['bob'],
        dedupKey: 'once',
        dedupTtlMs: 60_000,
      })
      expect(again.args).toEqual(['ada'])
      const sql = sqlAs(roles.producer)
      const [row] = await sql`select state from iddqueue.messages where id = ${sent.id}`
      expect(row?.state).toBe('queued')
      await refused(sql, 'select args from iddqueue.messages')
      await refused(sql, 'select * from iddqueue.messages')
      await refused(sql, `update iddqueue.messages set state = 'done'`)
      await refused(sql, 'delete from iddqueue.messages')
      await refused(sql, 'select * from iddqueue.workers')
      await refused(
        sql,
        `insert into iddqueue.migrations (owner, version, name, checksum) values ('x', 1, 'x', 'x')`,
      )
      await refused(sql, 'drop table iddqueue.messages')
      await refused(sql, 'create table iddqueue.intruder (x int)')
      await refused(sql, 'alter table iddqueue.messages add column x int')
    } finally {
      await producer.close()
    }
  })

  it('a worker runs what a producer sent, and cannot change the schema', async () => {
    const queue = uniqueQueue('grants')
    const producer = createBroker({ url: urlAs(roles.producer) })
    const workerBroker = createBroker({ url: urlAs(roles.worker) })
    try {
      const ran: string[] = []
      producer.actor('greet', () => {}, { queue })
      workerBroker.actor(
        'greet',
        (name: string) => {
          ran.push(name)
        },
        { queue },
      )
      const errors: unknown[] = []
      workerBroker.on('worker:error', ({ error }) => errors.push(error))
      const worker = workerBroker.worker({ queues: [queue] })
      await worker.start()
      await producer.enqueue(producer.message('greet', ['ada'], { queue }))
      await until(() => ran.length === 1, 20_000, 'the worker to run the message')
      await workerBroker.join({ queues: [queue], timeoutMs: 20_000 })
      expect(await workerBroker.purge({ olderThanMs: 0 })).toBeDefined()
      await worker.stop()
      expect(errors).toEqual([])
      const sql = sqlAs(roles.worker)
      await refused(sql, 'drop table iddqueue.messages')
      await refused(sql, 'create table iddqueue.intruder (x int)')
      await refused(sql, 'alter table iddqueue.workers add column x int')
      await refused(sql, 'truncate iddqueue.messages')
      await refused(sql, `delete from iddqueue.migrations`)
    } finally {
      await producer.close()
      await workerBroker.close()
    }
  })

  it('an admin operates on every table but still cannot change the schema', async () => {
    const admin = createBroker({ url: urlAs(roles.admin) })
    try {
      const queue = uniqueQueue('grants')
      await admin.pause(queue)
      await admin.resume(queue)
      await admin.purge({ olderThanMs: 0 })
      const sql = sqlAs(roles.admin)
      await sql`select args, options, failure from iddqueue.messages limit 1`
      await refused(sql, 'drop table iddqueue.messages')
      await refused(sql, 'create table iddqueue.intruder (x int)')
      await refused(sql, `delete from iddqueue.migrations`)
    } finally {
      await admin.close()
    }
  })
})
