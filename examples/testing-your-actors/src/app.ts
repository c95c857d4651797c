import { createBroker } from '@iddqueue/core'
import type { Sql } from 'postgres'

/** Whatever sends email in production; tests pass a fake that records calls. */
export interface Mailer {
  send(to: string, subject: string): Promise<void>
}

export interface AppOptions {
  readonly url: string
  readonly sql: Sql
  readonly mailer: Mailer
  /** Backoff between retries; production keeps the default, tests shorten it. */
  readonly retryBackoffMs?: number | undefined
}

/** The application: its tables, its actors, and the one operation that sends. */
export function createApp({ url, sql, mailer, retryBackoffMs = 15_000 }: AppOptions) {
  const broker = createBroker({ url })

  const welcomeEmail = broker.actor(
    'welcome_email',
    async (email: string) => {
      await mailer.send(email, 'Welcome!')
    },
    {
      queue: 'emails',
      maxRetries: 3,
      minBackoffMs: retryBackoffMs,
      maxBackoffMs: retryBackoffMs * 2,
    },
  )

  /**
   * Stores a user and sends one welcome email, in one transaction: a failed
   * signup sends nothing, and signing up twice sends one email.
   */
  async function signUp(email: string): Promise<void> {
    if (!email.includes('@')) throw new Error(`not an email address: ${email}`)
    await sql.begin(async (tx) => {
      await tx`insert into users (email) values (${email}) on conflict (email) do nothing`
      await welcomeEmail.sendWithOptions({
        args: [email],
        transaction: tx,
        dedupKey: `welcome:${email}`,
        dedupTtlMs: 86_400_000,
      })
    })
  }

  return { broker, welcomeEmail, signUp }
}

/** The application's own tables (run by its migrations in production). */
export async function createAppTables(sql: Sql): Promise<void> {
  await sql`create table if not exists users (email text primary key, created_at timestamptz not null default now())`
}
