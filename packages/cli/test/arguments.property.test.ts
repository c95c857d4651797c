import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SECTIONS } from '../src/commands/all-commands.js'
import { runCli } from './helpers.js'

// Random command lines: the CLI always answers with an exit code (0, 1 or
// 2) and text, never throws, and never prints the URL's password. The URL
// points nowhere, so a command that gets as far as connecting fails fast.
const SECRET = 'p4ss-word-never-printed'
const URL = `postgres://someone:${SECRET}@127.0.0.1:1/nothing`

// Commands that run until a signal (servers, workers, the scheduler) are left
// out: a random command line that starts one would wait for ever.
const LONG_RUNNING = new Set(['worker', 'scheduler', 'metrics serve', 'dev-db', 'dashboard'])
const words = SECTIONS.flatMap((s) =>
  s.commands.filter((c) => !LONG_RUNNING.has(c.name)).map((c) => c.name.split(' ')),
)
const token = fc.oneof(
  fc.constantFrom(
    ...words.flat(),
    'help',
    '--help',
    '--json',
    '--schema',
    '--prefix',
    '--url',
    '--limit',
    '--queue',
    '--role',
    '--mode',
    '--',
    '-',
  ),
  fc.constantFrom(
    '0',
    '-1',
    '1e9',
    'NaN',
    '9'.repeat(40),
    'a"b',
    'Ünïcode',
    '\u0000',
    ' ',
    '',
    'pg_bad',
    'producer',
  ),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.uuid(),
)

describe('the command line, under random arguments', () => {
  it('always ends with exit 0, 1 or 2 and never shows the password', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...words),
        fc.array(token, { maxLength: 6 }),
        async (command, rest) => {
          const run = await runCli(['--url', URL, ...command, ...rest], { DATABASE_URL: undefined })
          expect([0, 1, 2], `${[...command, ...rest].join(' ')}\n${run.stderr}`).toContain(run.code)
          expect(run.stdout + run.stderr).not.toContain(SECRET)
          if (run.code === 2) expect(run.stderr.length).toBeGreaterThan(0)
        },
      ),
      { numRuns: 80 },
    )
  }, 300_000)
})
