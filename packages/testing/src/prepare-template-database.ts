import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { connect } from './internal/connect.js'
import { assertDatabaseName } from './internal/database-name.js'
import { databaseUrl, parseServerUrl } from './internal/database-url.js'
import { TestDatabaseError } from './test-database-error.js'

/**
 * Options of {@link prepareTemplateDatabase}.
 *
 * @example
 * const options: PrepareTemplateDatabaseOptions = {
 *   name: 'myapp_template',
 *   fingerprint: '2024-06-01-add-orders',
 *   setup: (url) => migrate(url),
 * }
 */
export interface PrepareTemplateDatabaseOptions {
  /** The template database name, a lowercase identifier such as `'iddqueue_template'`. */
  readonly name: string
  /**
   * Fills the template, e.g. runs migrations. Receives the template's URL and
   * must close every connection it opened before it resolves (leftovers are
   * terminated anyway, since PostgreSQL cannot clone a database in use).
   */
  readonly setup: (url: string) => Promise<void>
  /**
   * Any string that changes when `setup` would build something different,
   * such as a hash of the migrations. A template built with another
   * fingerprint is dropped and rebuilt. Default: none, build once and keep.
   */
  readonly fingerprint?: string
}

const disconnectTimeoutMs = 10_000

/**
 * Builds a template database once, for {@link createTestDatabase} to clone.
 *
 * Safe under concurrent callers, in one process or many: they serialise on a
 * PostgreSQL advisory lock keyed by the name, and only the first one that finds
 * the template missing, unfinished or built with another `fingerprint` runs
 * `setup`; the others wait and reuse its work. The fingerprint (hashed) is
 * stored in the database comment only after `setup` succeeded, so a template
 * whose setup failed or was interrupted is rebuilt next time. When it resolves,
 * no session is connected to the template. Returns the template name.
 *
 * @example
 * const template = await prepareTemplateDatabase('postgres://root@127.0.0.1:5432/test', {
 *   name: 'iddqueue_template',
 *   fingerprint: migrationsHash,
 *   setup: async (url) => {
 *     const sql = postgres(url)
 *     await sql`create table orders (id bigint primary key)`
 *     await sql.end()
 *   },
 * })
 * const db = await createTestDatabase(serverUrl, { template })
 */
export async function prepareTemplateDatabase(
  serverUrl: string,
  options: PrepareTemplateDatabaseOptions,
): Promise<string> {
  parseServerUrl(serverUrl)
  const { name, setup } = options
  assertDatabaseName(name, 'prepareTemplateDatabase option `name`')
  if (typeof setup !== 'function') {
    throw new TestDatabaseError(
      `prepareTemplateDatabase option \`setup\` must be a function, got ${typeof setup}`,
    )
  }
  if (new URL(serverUrl).pathname === `/${name}`) {
    throw new TestDatabaseError(
      `prepareTemplateDatabase option \`name\` must differ from the database of serverUrl, both are ${name}`,
    )
  }
  const comment = `iddqueue-template:${sha256(options.fingerprint ?? '')}`

  const sql = connect(serverUrl)
  try {
    // Session-level lock: `max: 1` keeps every statement on one connection,
    // and it is released when that connection closes, even if we crash.
    await sql`select pg_advisory_lock(${lockKey(name)}::bigint)`
    try {
      const [row] = await sql<{ comment: string | null }[]>`
        select shobj_description(oid, 'pg_database') as comment
        from pg_database where datname = ${name}`
      if (row?.comment === comment) return name

      if (row !== undefined) await sql`drop database ${sql(name)} with (force)`
      await sql`create database ${sql(name)}`
      try {
        await setup(databaseUrl(serverUrl, name))
      } catch (error) {
        await sql`drop database if exists ${sql(name)} with (force)`
        throw new TestDatabaseError(
          `setup of template database ${name} failed: ${(error as Error)?.message ?? String(error)}`,
          { cause: error },
        )
      }
      await disconnectAll(sql, name)
      // A literal, not a parameter: COMMENT does not take parameters. The
      // value is hex from sha256, so it needs no escaping.
      await sql.unsafe(`comment on database "${name}" is '${comment}'`)
      return name
    } finally {
      // If the connection broke, the lock went with it; keep the first error.
      await sql`select pg_advisory_unlock(${lockKey(name)}::bigint)`.catch(() => {})
    }
  } catch (error) {
    if (TestDatabaseError.isInstance(error)) throw error
    throw new TestDatabaseError(
      `could not prepare template database ${name}: ${(error as Error).message}`,
      { cause: error },
    )
  } finally {
    await sql.end()
  }
}

async function disconnectAll(sql: ReturnType<typeof connect>, name: string): Promise<void> {
  const deadline = Date.now() + disconnectTimeoutMs
  for (;;) {
    // pg_terminate_backend only signals; the sessions leave a moment later.
    const sessions = await sql<{ pid: number }[]>`
      select pid, pg_terminate_backend(pid)
      from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`
    if (sessions.length === 0) return
    if (Date.now() > deadline) {
      throw new TestDatabaseError(
        `template database ${name} still has ${sessions.length} connection(s) after ${disconnectTimeoutMs} ms`,
      )
    }
    await sleep(20)
  }
}

function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

// A stable signed 64-bit advisory lock key per template name.
function lockKey(name: string): string {
  const digest = createHash('sha256').update(`iddqueue.template:${name}`).digest()
  return digest.readBigInt64BE(0).toString()
}
