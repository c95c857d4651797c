import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  checkSchema,
  coreMigrations,
  describeSchema,
  generateInitSql,
  generateUpgradeSql,
  InvalidIdentifierError,
  type Migration,
  MigrationError,
  type MigrationSet,
  migrate,
  namespace,
  postgresJsExecutor,
} from '../src/index.js'

const run = promisify(execFile)
const database = useTestDatabase()
let sql: postgres.Sql

beforeAll(() => {
  sql = postgres(database.url, { max: 8, onnotice: () => {} })
})
afterAll(() => sql.end())

const ledger = (schema: string, prefix = '') =>
  sql.unsafe(
    `select owner, version, name from "${schema}"."${prefix}migrations" order by owner, version`,
  )

describe('migrate', () => {
  it('creates the core tables and is a no-op the second time', async () => {
    const ns = namespace({ schema: 'mig_twice' })
    const first = await migrate(sql, { namespace: ns })
    expect(first.applied).toEqual([
      { owner: '@iddqueue/core', version: 1, name: 'core-tables' },
      { owner: '@iddqueue/core', version: 2, name: 'message-progress' },
      { owner: '@iddqueue/core', version: 3, name: 'stats-read-paths' },
      { owner: '@iddqueue/core', version: 4, name: 'purge-read-path' },
    ])
    const before = await describeSchema(sql, ns)
    expect(Object.keys(before).sort()).toEqual([
      'attempts',
      'deduplication',
      'messages',
      'migrations',
      'queue_control',
      'workers',
    ])
    expect(before.messages?.indexes).toContain(
      "messages_ready: USING btree (queue, priority, eta, id) WHERE (state = 'queued'::text)",
    )
    const second = await migrate(sql, { namespace: ns })
    expect(second.applied).toEqual([])
    expect(await describeSchema(sql, ns)).toEqual(before)
    expect(await ledger('mig_twice')).toEqual([
      { owner: '@iddqueue/core', version: 1, name: 'core-tables' },
      { owner: '@iddqueue/core', version: 2, name: 'message-progress' },
      { owner: '@iddqueue/core', version: 3, name: 'stats-read-paths' },
      { owner: '@iddqueue/core', version: 4, name: 'purge-read-path' },
    ])
  })

  it('leaves one consistent schema when four callers race', async () => {
    const ns = namespace({ schema: 'mig_race', prefix: 'r_' })
    const results = await Promise.all([1, 2, 3, 4].map(() => migrate(sql, { namespace: ns })))
    const count = coreMigrations.migrations.length
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, 0, count])
    expect(await ledger('mig_race', 'r_')).toHaveLength(count)
    expect((await checkSchema(sql, { namespace: ns })).ok).toBe(true)
  })

  it('applies plugin migrations in order, each owner with its own versions', async () => {
    const ns = namespace({ schema: 'mig_plugins' })
    const plugin: MigrationSet = {
      owner: '@iddqueue/example',
      migrations: [
        {
          version: 1,
          name: 'one',
          up: (n) => [`create table ${n.table('results')} (message_id uuid primary key)`],
        },
        {
          version: 2,
          name: 'two',
          up: (n) => [`alter table ${n.table('results')} add column note text`],
        },
      ],
    }
    const seen: string[] = []
    const result = await migrate(sql, {
      namespace: ns,
      owners: [coreMigrations, plugin],
      onMigration: (m) => seen.push(`${m.owner}#${m.version}`),
    })
    const core = coreMigrations.migrations.map((m) => `@iddqueue/core#${m.version}`)
    expect(seen).toEqual([...core, '@iddqueue/example#1', '@iddqueue/example#2'])
    expect(result.applied).toHaveLength(core.length + 2)
    expect((await describeSchema(sql, ns)).results?.columns).toEqual([
      'message_id uuid not null',
      'note text',
    ])
  })

  it('refuses an applied migration whose text changed, and changes nothing', async () => {
    const ns = namespace({ schema: 'mig_edited' })
    const original: Migration = {
      version: 1,
      name: 'x',
      up: (n) => [`create table ${n.table('schedules')} (a int)`],
    }
    await migrate(sql, {
      namespace: ns,
      owners: [{ owner: '@iddqueue/x', migrations: [original] }],
    })
    const edited: Migration = {
      ...original,
      up: (n) => [`create table ${n.table('schedules')} (b int)`],
    }
    await expect(
      migrate(sql, { namespace: ns, owners: [{ owner: '@iddqueue/x', migrations: [edited] }] }),
    ).rejects.toThrow(
      new MigrationError(
        'Migration @iddqueue/x #1 (x) differs from the one applied to this database; migrations are append-only, add a new one instead',
      ),
    )
    expect((await describeSchema(sql, ns)).schedules?.columns).toEqual(['a integer'])
  })

  it('refuses migration sets with gaps before touching the database', async () => {
    const gap: MigrationSet = {
      owner: '@iddqueue/gap',
      migrations: [{ version: 2, name: 'x', up: () => [] }],
    }
    await expect(migrate(sql, { namespace: { schema: 'mig_gap' }, owners: [gap] })).rejects.toThrow(
      'Migration @iddqueue/gap #1 has version 2',
    )
    const [row] = await sql`select count(*)::int as n from pg_namespace where nspname = 'mig_gap'`
    expect(row?.n).toBe(0)
  })

  it('refuses hostile namespaces before any statement runs', async () => {
    const executor = postgresJsExecutor(sql)
    const statements: string[] = []
    const counting = {
      ...executor,
      query: (text: string, params?: readonly unknown[]) => {
        statements.push(text)
        return executor.query(text, params)
      },
    }
    for (const schema of ['x"; drop schema public cascade; --', 'X', 'a b', '']) {
      await expect(migrate(counting, { namespace: { schema } })).rejects.toThrow(
        InvalidIdentifierError,
      )
    }
    await expect(migrate(counting, { namespace: { prefix: 'p";--' } })).rejects.toThrow(
      InvalidIdentifierError,
    )
    expect(statements).toEqual([])
  })

  it('works inside a caller transaction through a savepoint, and rolls back with it', async () => {
    const ns = namespace({ schema: 'mig_tx' })
    await sql
      .begin(async (tx) => {
        await migrate(tx, { namespace: ns })
        throw new Error('roll back')
      })
      .catch(() => {})
    const [row] = await sql`select count(*)::int as n from pg_namespace where nspname = 'mig_tx'`
    expect(row?.n).toBe(0)
  })
})

describe('generateInitSql', () => {
  it('applied with psql gives the same catalog and ledger as migrate, and is safe to apply twice', async () => {
    const viaPsql = namespace({ schema: 'init_psql', prefix: 'q_' })
    const viaMigrate = namespace({ schema: 'init_migrate', prefix: 'q_' })
    const file = join(mkdtempSync(join(tmpdir(), 'iddqueue-init-')), 'init.sql')
    writeFileSync(file, generateInitSql({ namespace: viaPsql }))
    for (let i = 0; i < 2; i++) {
      await run('psql', [database.url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', file])
    }
    await migrate(sql, { namespace: viaMigrate })
    const psqlCatalog = await describeSchema(sql, viaPsql)
    expect(psqlCatalog.messages?.columns.length).toBeGreaterThan(10)
    expect(psqlCatalog).toEqual(await describeSchema(sql, viaMigrate))
    const rows = await sql`select owner, version, name, checksum from init_psql.q_migrations`
    const expected = await sql`select owner, version, name, checksum from init_migrate.q_migrations`
    expect(rows).toEqual(expected)
    // migrate finds nothing left to do after the script.
    expect((await migrate(sql, { namespace: viaPsql })).applied).toEqual([])
  })

  it('generateUpgradeSql lists only pending migrations', async () => {
    const ns = namespace({ schema: 'upgrade_sql' })
    const extra: MigrationSet = {
      owner: '@iddqueue/extra',
      migrations: [
        {
          version: 1,
          name: 'extra-table',
          up: (n) => [`create table ${n.table('coordination')} (key text)`],
        },
      ],
    }
    await migrate(sql, { namespace: ns })
    const text = await generateUpgradeSql(sql, { namespace: ns, owners: [coreMigrations, extra] })
    expect(text).toContain('-- @iddqueue/extra #1: extra-table')
    expect(text).not.toContain('-- @iddqueue/core #1')
  })
})

describe('checkSchema', () => {
  it('reports a hand-made index and a dropped column, and nothing for a clean schema', async () => {
    const ns = namespace({ schema: 'drift' })
    await migrate(sql, { namespace: ns })
    expect(await checkSchema(sql, { namespace: ns })).toEqual({ ok: true, differences: [] })
    await sql.unsafe('create index handmade on drift.messages (actor)')
    await sql.unsafe('alter table drift.workers drop column pid')
    const check = await checkSchema(sql, { namespace: ns })
    expect(check.ok).toBe(false)
    expect(check.differences).toEqual([
      '- workers: column pid integer not null',
      '+ messages: index handmade: USING btree (actor)',
    ])
    const [scratch] =
      await sql`select count(*)::int as n from pg_namespace where nspname like 'iddqueue_check_%'`
    expect(scratch?.n).toBe(0)
  })

  it('reports a dropped NOT NULL once, on its column, on every PostgreSQL version', async () => {
    // PostgreSQL 18 keeps NOT NULL as constraint rows too; the check must not repeat them.
    const ns = namespace({ schema: 'drift_not_null' })
    await migrate(sql, { namespace: ns })
    await sql.unsafe('alter table drift_not_null.workers alter column host drop not null')
    expect(await checkSchema(sql, { namespace: ns })).toEqual({
      ok: false,
      differences: ['- workers: column host text not null', '+ workers: column host text'],
    })
    const live = await describeSchema(sql, ns)
    expect(live.workers?.constraints.filter((line) => line.includes('NOT NULL'))).toEqual([])
  })
})
