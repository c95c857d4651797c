import { createHash } from 'node:crypto'
import { generateInitSql, migrate } from '@iddqueue/schema'
import { createGlobalSetup } from '@iddqueue/testing/vitest'
import postgres from 'postgres'

// Every test file gets a database cloned from this template, already
// migrated in the default namespace.
export default createGlobalSetup({
  template: {
    name: 'iddqueue_core_template',
    fingerprint: createHash('sha256').update(generateInitSql()).digest('hex'),
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
