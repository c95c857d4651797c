import { describe, expect, it } from 'vitest'
import { COMMANDS } from '../src/commands/all-commands.js'
import { runCli } from './helpers.js'

// Database-free: help and usage errors are answered before any connection.
const URL = ['--url', 'postgres://nobody@127.0.0.1:1/none']

describe('iddqueue help', () => {
  it('prints the whole usage for `help`, as for --help and -h', async () => {
    const help = await runCli(['help'])
    expect(help).toMatchObject({ code: 0, stderr: '' })
    expect(help.stdout).toContain('  failed show ID [--payload]')
    expect(help.stdout).toContain('iddqueue help COMMAND')
    expect((await runCli(['--help'])).stdout).toBe(help.stdout)
    expect((await runCli(['-h'])).stdout).toBe(help.stdout)
  })

  it('answers `help COMMAND` and `COMMAND --help` alike for every command', async () => {
    for (const name of COMMANDS.keys()) {
      const words = name.split(' ')
      const viaHelp = await runCli(['help', ...words])
      const viaFlag = await runCli([...words, '--help'])
      expect([name, viaHelp.code, viaFlag.code]).toEqual([name, 0, 0])
      expect(viaHelp.stdout).toMatch(new RegExp(`^usage: iddqueue .* ${name}\\b`))
      expect(viaFlag.stdout).toBe(viaHelp.stdout)
      // Help wins over a missing operand or database.
      expect(viaFlag.stderr).toBe('')
    }
  })

  it('lists the subcommands of a group for `GROUP --help` and `help GROUP`', async () => {
    const groups: [string, string[]][] = [
      ['sql', ['sql init', 'sql upgrade', 'sql grants --role ROLE --mode producer|worker|admin']],
      ['failed', ['failed list', 'failed show ID']],
      ['history', ['history list ID', 'history purge --older-than-ms N']],
    ]
    for (const [group, synopses] of groups) {
      const run = await runCli([group, '--help'])
      expect([group, run.code, run.stderr]).toEqual([group, 0, ''])
      expect(run.stdout).toContain(
        `usage: iddqueue [--url URL] [--schema NAME] [--prefix PREFIX] ${group} <command>`,
      )
      for (const synopsis of synopses) expect(run.stdout).toContain(`  ${synopsis}`)
      expect((await runCli(['help', group])).stdout).toBe(run.stdout)
    }
  })

  it('exits 2 for help on a command that does not exist', async () => {
    const run = await runCli(['help', 'failed', 'lst'])
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe('iddqueue help: unknown command "failed lst"\n')
  })
})

describe('iddqueue usage errors', () => {
  it('names an unknown option in one line, suggesting a close one, then the usage', async () => {
    const bogus = await runCli([...URL, 'stats', '--bogus'])
    expect(bogus).toMatchObject({ code: 2, stdout: '' })
    expect(bogus.stderr).toMatch(
      /^iddqueue stats: Unknown option '--bogus'\nusage: iddqueue .* stats /,
    )
    expect(bogus.stderr).not.toContain('positional')
    const typo = await runCli([...URL, 'failed', 'list', '--lmit', '5'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toMatch(
      /^iddqueue failed list: Unknown option '--lmit' \(did you mean --limit\?\)\nusage: /,
    )
    const global = await runCli(['--bogus', 'stats'])
    expect(global.stderr).toBe(
      "iddqueue: Unknown option '--bogus'\nrun `iddqueue help` for the commands and options\n",
    )
  })

  it('reads a negative number as the value of its option and refuses it the same way in every spelling', async () => {
    const cases: [string[], string][] = [
      [
        ['failed', 'list', '--limit', '-5'],
        'iddqueue failed list: invalid --limit "-5": expected a whole number',
      ],
      [
        ['failed', 'list', '--limit=-5'],
        'iddqueue failed list: invalid --limit "-5": expected a whole number',
      ],
      [
        ['pause', 'q', '--timeout-ms', '-1'],
        'iddqueue pause: invalid --timeout-ms "-1": expected a whole number',
      ],
      [
        ['purge', '--older-than-ms', '-1'],
        'iddqueue purge: invalid --older-than-ms "-1": expected a whole number',
      ],
      [
        ['worker', './jobs.mjs', '--concurrency', '-2'],
        'iddqueue worker: invalid --concurrency "-2": expected a whole number',
      ],
    ]
    for (const [argv, message] of cases) {
      const run = await runCli([...URL, ...argv])
      expect([argv, run.code, run.stdout]).toEqual([argv, 2, ''])
      expect(run.stderr.split('\n')[0]).toBe(message)
    }
  })

  it('refuses a database URL that is not PostgreSQL, without echoing it', async () => {
    for (const url of ['mysql://me:secret@db/app', 'http://db/app']) {
      const run = await runCli(['--url', url, 'stats'])
      expect([url, run.code, run.stdout]).toEqual([url, 2, ''])
      expect(run.stderr).toMatch(
        /^iddqueue stats: invalid database URL: expected postgres:\/\/user@host:port\/database, got a (mysql|http): URL\n/,
      )
      expect(run.stderr).not.toContain('secret')
    }
  })

  it('prints the whole usage on stderr and exits 2 without a command', async () => {
    const run = await runCli([])
    expect(run).toMatchObject({ code: 2, stdout: '' })
    expect(run.stderr).toBe((await runCli(['help'])).stdout)
  })
})
