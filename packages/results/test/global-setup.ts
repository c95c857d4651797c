import { createHash } from 'node:crypto'
import { coreMigrations, generateInitSql, migrate } from '@iddqueue/schema'
import { createGlobalSetup } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { resultsMigrations } from '../src/migrations.js'

const owners = [coreMigrations, { owner: '@iddqueue/results', migrations: resultsMigrations }]

// Every test file gets a database cloned from this template, with core's
// and the plugin's migrations applied in the default namespace.
const fingerprint = createHash('sha256').update(generateInitSql({ owners })).digest('hex')

export default createGlobalSetup({
  template: {
    // One template per schema version: helpers on other branches share this
    // PostgreSQL, and a shared name let their runs rebuild it under ours.
    name: `iddqueue_results_template_${fingerprint.slice(0, 12)}`,
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
