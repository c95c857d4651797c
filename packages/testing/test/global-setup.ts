import postgres from 'postgres'
import { createGlobalSetup } from '../src/vitest.js'

// The template every useTestDatabase() database of this suite is cloned from.
const globalTemplateName = 'iddqueue_testing_suite_template'

export default createGlobalSetup({
  template: {
    name: globalTemplateName,
    fingerprint: 'widgets-v1',
    setup: async (url) => {
      const sql = postgres(url, { onnotice: () => {} })
      await sql`create table widgets (id int primary key)`
      await sql`insert into widgets values (1), (2)`
      await sql.end()
    },
  },
})
