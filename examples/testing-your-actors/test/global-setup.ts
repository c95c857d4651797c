import { createHash } from 'node:crypto'
import { createBroker } from '@iddqueue/core'
import { generateInitSql } from '@iddqueue/schema'
import { createGlobalSetup } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { createAppTables } from '../src/app.js'

// One PostgreSQL for the run (DATABASE_URL, else Docker, else embedded) and a
// template with iddqueue's tables and the app's; each test file gets a clone.
export default createGlobalSetup({
  template: {
    name: 'example_app_template',
    fingerprint: createHash('sha256')
      .update(generateInitSql())
      .update(createAppTables.toString())
      .digest('hex'),
    async setup(url) {
      const broker = createBroker({ url })
      const sql = postgres(url, { max: 1, onnotice: () => {} })
      try {
        await broker.migrate()
        await createAppTables(sql)
      } finally {
        await broker.close()
        await sql.end()
      }
    },
  },
})
