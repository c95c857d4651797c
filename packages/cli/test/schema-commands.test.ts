import { describe, expect, it } from 'vitest'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()

describe('iddqueue sql upgrade', () => {
  it('says there is nothing to apply, in an SQL comment, on an up-to-date database', async () => {
    const run = await db.cli('sql', 'upgrade')
    expect(run).toMatchObject({
      code: 0,
      stderr: '',
      stdout: '-- nothing to apply: schema "iddqueue" is up to date (@iddqueue/core)\n',
    })
  })

  it('prints every migration for a namespace never migrated', async () => {
    const run = await db.cli('--schema', 'never_migrated', 'sql', 'upgrade')
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('-- @iddqueue/core #1: core-tables')
  })
})

describe('iddqueue check', () => {
  it('says a schema has no iddqueue tables instead of listing every difference', async () => {
    const run = await db.cli('--schema', 'nosuch', 'check')
    expect(run).toMatchObject({ code: 1, stdout: '' })
    expect(run.stderr).toBe(
      'iddqueue check: the iddqueue tables do not exist in schema "nosuch"; run `iddqueue --schema nosuch migrate` first\n',
    )
  })
})

describe('the "run migrate first" hint', () => {
  it('repeats the --schema and --prefix given', async () => {
    const run = await db.cli('--schema', 'empty_ns', '--prefix', 'app_', 'stats')
    expect(run).toMatchObject({ code: 1, stdout: '' })
    expect(run.stderr).toBe(
      'iddqueue stats: the iddqueue tables do not exist in schema "empty_ns" with prefix "app_"; run `iddqueue --schema empty_ns --prefix app_ migrate` first\n',
    )
    const plain = await db.cli('--prefix', 'none_', 'failed', 'list')
    expect(plain.stderr).toContain('run `iddqueue --prefix none_ migrate` first')
  })
})
