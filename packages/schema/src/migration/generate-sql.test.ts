import { describe, expect, it } from 'vitest'
import { MigrationError } from '../errors.js'
import { generateInitSql } from './generate-sql.js'

describe('generateInitSql', () => {
  it('refuses a migration containing $ddl$ with MigrationError naming it', () => {
    const owners = [
      {
        owner: '@example/bad',
        migrations: [{ version: 1, name: 'quote', up: () => ['select $ddl$x$ddl$'] }],
      },
    ]
    let error: unknown
    try {
      generateInitSql({ owners })
    } catch (caught) {
      error = caught
    }
    expect(MigrationError.isInstance(error)).toBe(true)
    expect(String(error)).toMatch(/@example\/bad #1 contains \$ddl\$/)
  })
})
