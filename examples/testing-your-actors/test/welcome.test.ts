import { drainQueues } from '@iddqueue/testing'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres, { type Sql } from 'postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createApp, type Mailer } from '../src/app.js'

const db = useTestDatabase()
let sql: Sql
let app: ReturnType<typeof createApp> | undefined

/** A mailer that records what it sent and can be told to fail. */
function fakeMailer(failFirst: Record<string, number> = {}): Mailer & { sent: string[] } {
  const sent: string[] = []
  return {
    sent,
    async send(to) {
      if ((failFirst[to] ?? 0) > 0) {
        failFirst[to] = (failFirst[to] ?? 0) - 1
        throw new Error(`mail server refused ${to}`)
      }
      sent.push(to)
    },
  }
}

beforeAll(() => {
  sql = postgres(db.url, { max: 2, onnotice: () => {} })
})
afterEach(async () => {
  await app?.broker.close() // stops its worker too
  app = undefined
  await sql`truncate users`
  await sql`truncate iddqueue.messages, iddqueue.deduplication`
})
afterAll(async () => {
  await sql.end()
})

describe('signUp', () => {
  it('sends one welcome email per new user', async () => {
    const mailer = fakeMailer()
    app = createApp({ url: db.url, sql, mailer, retryBackoffMs: 10 })
    await app.signUp('ada@example.com')
    await app.signUp('grace@example.com')

    await app.broker.worker().start()
    await drainQueues(app.broker, { timeoutMs: 20_000 })

    expect(mailer.sent.sort()).toEqual(['ada@example.com', 'grace@example.com'])
  })

  it('retries a refused email until it is sent, once', async () => {
    const mailer = fakeMailer({ 'ada@example.com': 2 })
    app = createApp({ url: db.url, sql, mailer, retryBackoffMs: 10 })
    await app.signUp('ada@example.com')

    await app.broker.worker().start()
    await drainQueues(app.broker, { timeoutMs: 20_000 })

    expect(mailer.sent).toEqual(['ada@example.com'])
    const [row] = await sql`select state, retries from iddqueue.messages`
    expect(row).toEqual({ state: 'done', retries: 2 })
  })

  it('sends one email when the same user signs up twice', async () => {
    const mailer = fakeMailer()
    app = createApp({ url: db.url, sql, mailer, retryBackoffMs: 10 })
    await app.signUp('ada@example.com')
    await app.signUp('ada@example.com')

    await app.broker.worker().start()
    await drainQueues(app.broker, { timeoutMs: 20_000 })

    expect(mailer.sent).toEqual(['ada@example.com'])
  })

  it('stores nothing and sends nothing when the signup is refused', async () => {
    const mailer = fakeMailer()
    app = createApp({ url: db.url, sql, mailer })
    await expect(app.signUp('not-an-email')).rejects.toThrow('not an email address: not-an-email')

    expect(await sql`select * from users`).toHaveLength(0)
    expect(await sql`select * from iddqueue.messages`).toHaveLength(0)
  })

  it('sends nothing when the signup transaction rolls back', async () => {
    const mailer = fakeMailer()
    app = createApp({ url: db.url, sql, mailer })
    const welcome = app.welcomeEmail
    await expect(
      sql.begin(async (tx) => {
        await welcome.sendWithOptions({ args: ['ada@example.com'], transaction: tx })
        throw new Error('payment declined')
      }),
    ).rejects.toThrow('payment declined')

    expect(await sql`select * from iddqueue.messages`).toHaveLength(0)
  })
})
