import { createHash } from 'node:crypto'
import { coreMigrations, generateInitSql, migrate } from '@iddqueue/schema'
import { createGlobalSetup } from '@iddqueue/testing/vitest'
import postgres from 'postgres'

const owners = [coreMigrations]

// Every test file gets a database cloned from this template, with core's
// migrations applied in the default namespace.
export default createGlobalSetup({
  template: {
    name: 'iddqueue_metrics_template',
    fingerprint: createHash('sha256').update(generateInitSql({ owners })).digest('hex'),
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
