import { createHash } from 'node:crypto'
import { migrationSet as coordinationMigrations } from '@iddqueue/coordination'
import { migrationSet as resultsMigrations } from '@iddqueue/results'
import { migrationSet as schedulerMigrations } from '@iddqueue/scheduler'
import { coreMigrations, generateInitSql, migrate } from '@iddqueue/schema'
import { createGlobalSetup } from '@iddqueue/testing/vitest'
import postgres from 'postgres'

const owners = [coreMigrations, resultsMigrations, schedulerMigrations, coordinationMigrations]
const fingerprint = createHash('sha256').update(generateInitSql({ owners })).digest('hex')

// Every test file gets a database cloned from this template: core's, the
// results', the scheduler's and coordination's migrations in the default namespace.
export default createGlobalSetup({
  template: {
    name: `iddqueue_dashboard_template_${fingerprint.slice(0, 12)}`,
    fingerprint,
    async setup(url) {
      const sql = postgres(url, { max: 1, onnotice: () => {} })
      try {
        await migrate(sql, { owners })
      } finally {
        await sql.end()
      }
    },
  },
})
