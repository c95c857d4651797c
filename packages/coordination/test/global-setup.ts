import { createHash } from 'node:crypto'
import { resultsMigrations } from '@iddqueue/results'
import { coreMigrations, generateInitSql, migrate } from '@iddqueue/schema'
import { createGlobalSetup } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { coordinationMigrations } from '../src/migrations.js'

const owners = [
  coreMigrations,
  { owner: '@iddqueue/coordination', migrations: coordinationMigrations },
  { owner: '@iddqueue/results', migrations: resultsMigrations },
]

// Every test file gets a database cloned from this template, with core's,
// this plugin's and the results plugin's migrations applied in the default
// namespace, plus a table the multi-process tests count holders in.
export default createGlobalSetup({
  template: {
    name: 'iddqueue_coordination_template',
    fingerprint: createHash('sha256')
      .update(generateInitSql({ owners }))
      .update('holders-v1')
      .digest('hex'),
    async setup(url) {
      const sql = postgres(url, { max: 1, onnotice: () => {} })
      try {
        await migrate(sql, { owners })
        await sql`create table public.holders (key text primary key, n integer not null, max integer not null)`
        await sql`create table public.events (seq bigserial primary key, kind text not null, label text not null, at timestamptz not null default clock_timestamp())`
      } finally {
        await sql.end()
      }
    },
  },
})
