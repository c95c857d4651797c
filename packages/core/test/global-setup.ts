import { createHash } from 'node:crypto'
import { generateInitSql, migrate } from '@iddqueue/schema'
import { createGlobalSetup } from '@iddqueue/testing/vitest'
import postgres from 'postgres'

// Every test file gets a database cloned from this template, already
// migrated in the default namespace.
const fingerprint = createHash('sha256').update(generateInitSql()).digest('hex')

export default createGlobalSetup({
  template: {
    // One template per schema version: helpers on other branches share this
    // PostgreSQL, and a shared name let their runs rebuild it under ours.
    name: `iddqueue_core_template_${fingerprint.slice(0, 12)}`,
    fingerprint,
    async setup(url) {
      const sql = postgres(url, { max: 1, onnotice: () => {} })
      try {
        await migrate(sql)
      } finally {
        await sql.end()
      }
    },
  },
})
