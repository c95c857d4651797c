import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { coreMigrations } from '@iddqueue/schema'
import { useTestDatabase } from '@iddqueue/testing/vitest'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'

const database = useTestDatabase()

/** Runs the CLI against the test database, from `cwd`. */
const run = (argv: string[], cwd?: string) => runCli(argv, { DATABASE_URL: database.url }, cwd)

async function tablesIn(schema: string): Promise<string[]> {
  const sql = postgres(database.url, { max: 1, onnotice: () => {} })
  try {
    const rows = await sql`select table_name from information_schema.tables
      where table_schema = ${schema} order by table_name`
    return rows.map((row) => row.table_name as string)
  } finally {
    await sql.end()
  }
}

/** An application directory with a plugin installed as a package and one as a file. */
let app: string

const AUDIT = `export const migrationSet = {
  owner: 'acme-audit',
  migrations: [{ version: 1, name: 'create-audit', up: (ns) => [\`create table "\${ns.schema}".\${ns.relation('audit')} (id int)\`] }],
}
`

beforeAll(() => {
  app = mkdtempSync(join(tmpdir(), 'iddqueue-cli-plugins-'))
  const pkg = join(app, 'node_modules', 'acme-audit')
  mkdirSync(join(pkg, 'dist'), { recursive: true })
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({
      name: 'acme-audit',
      type: 'module',
      exports: { '.': { types: './dist/index.d.ts', import: './dist/index.js' } },
    }),
  )
  writeFileSync(join(pkg, 'dist', 'index.js'), AUDIT)
  const other = join(app, 'node_modules', 'not-a-plugin')
  mkdirSync(other, { recursive: true })
  writeFileSync(
    join(other, 'package.json'),
    JSON.stringify({ name: 'not-a-plugin', type: 'module', main: 'main.js' }),
  )
  writeFileSync(join(other, 'main.js'), 'export const something = 1\n')
  mkdirSync(join(app, 'src', 'jobs'), { recursive: true })
  writeFileSync(
    join(app, 'src', 'local-plugin.mjs'),
    AUDIT.replaceAll('acme-audit', 'local-audit').replaceAll("'audit'", "'local_audit'"),
  )
})

afterAll(() => {
  rmSync(app, { recursive: true, force: true })
})

describe('--plugins', () => {
  it('applies, checks and prints the migrations of @iddqueue/results beside core', async () => {
    const plugins = ['--plugins', '@iddqueue/results']
    const cliResults = (...command: string[]) =>
      run(['--schema', 'cli_results', ...command, ...plugins])
    const before = await cliResults('sql', 'upgrade')
    expect(before.stdout).toContain('-- @iddqueue/results #1: create-results')
    const migrated = await cliResults('migrate')
    expect([migrated.code, migrated.stderr]).toEqual([
      0,
      'applying @iddqueue/core #1 core-tables\napplying @iddqueue/core #2 message-progress\napplying @iddqueue/core #3 stats-read-paths\napplying @iddqueue/core #4 purge-read-path\napplying @iddqueue/results #1 create-results\n',
    ])
    expect(JSON.parse(migrated.stdout).applied).toEqual([
      { owner: '@iddqueue/core', version: 1, name: 'core-tables' },
      { owner: '@iddqueue/core', version: 2, name: 'message-progress' },
      { owner: '@iddqueue/core', version: 3, name: 'stats-read-paths' },
      { owner: '@iddqueue/core', version: 4, name: 'purge-read-path' },
      { owner: '@iddqueue/results', version: 1, name: 'create-results' },
    ])
    expect(await tablesIn('cli_results')).toContain('results')
    const check = await cliResults('check')
    expect([check.code, JSON.parse(check.stdout)]).toEqual([0, { ok: true, differences: [] }])
    const after = await cliResults('sql', 'upgrade')
    expect([after.code, after.stdout.includes('@iddqueue/results #1')]).toEqual([0, false])
    const init = await cliResults('sql', 'init')
    expect(init.stdout).toContain('create table "cli_results"."results"')
  })

  it('finds a package from a nested directory of the application, and a plugin given as a path', async () => {
    const cwd = join(app, 'src', 'jobs')
    const result = await run(
      ['--schema', 'cli_audit', 'migrate', '--plugins', 'acme-audit, ../local-plugin.mjs'],
      cwd,
    )
    expect(result.stderr).not.toContain('iddqueue migrate:')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).applied.map((m: { owner: string }) => m.owner)).toEqual([
      ...coreMigrations.migrations.map(() => '@iddqueue/core'),
      'acme-audit',
      'local-audit',
    ])
    expect(await tablesIn('cli_audit')).toEqual(expect.arrayContaining(['audit', 'local_audit']))
  })

  it('checks the plugins the ledger records when --plugins is not given', async () => {
    const migrated = await run(
      ['--schema', 'cli_ledger', 'migrate', '--plugins', 'acme-audit'],
      app,
    )
    expect(migrated.code).toBe(0)
    const check = await run(['--schema', 'cli_ledger', 'check'], app)
    expect([check.code, check.json(), check.stderr]).toEqual([0, { ok: true, differences: [] }, ''])
    // From a directory where the plugin is not installed: say which --plugins to pass.
    const elsewhere = mkdtempSync(join(tmpdir(), 'iddqueue-cli-elsewhere-'))
    try {
      const lost = await run(['--schema', 'cli_ledger', 'check'], elsewhere)
      expect([lost.code, lost.stdout]).toEqual([2, ''])
      expect(lost.stderr).toContain(
        'iddqueue check: the ledger records migrations of acme-audit, which could not be loaded from ',
      )
      expect(lost.stderr).toContain('pass --plugins acme-audit')
    } finally {
      rmSync(elsewhere, { recursive: true, force: true })
    }
    // @iddqueue/results, found from this package as an application would find it.
    await run(['--schema', 'cli_ledger_results', 'migrate', '--plugins', '@iddqueue/results'])
    const results = await run(['--schema', 'cli_ledger_results', 'check'])
    expect([results.code, results.json()]).toEqual([0, { ok: true, differences: [] }])
  })

  it('exits 2 without touching the database for a plugin it cannot find or read', async () => {
    const cases: [string, string][] = [
      ['acme-missing', '--plugins: cannot find package acme-missing from '],
      ['not-a-plugin', '--plugins: not-a-plugin does not export migrationSet'],
      ['./nowhere.mjs', '--plugins: no file '],
      ['acme-audit,', '--plugins: empty package name'],
    ]
    for (const [plugins, message] of cases) {
      const result = await run(['--schema', 'cli_refused', 'migrate', '--plugins', plugins], app)
      expect([plugins, result.code]).toEqual([plugins, 2])
      expect(result.stderr).toContain(`iddqueue migrate: ${message}`)
    }
    expect(await tablesIn('cli_refused')).toEqual([])
  })
})
