import { describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'

const SECRET = `s3cret-${crypto.randomUUID()}`

describe('the CLI with a URL carrying a password', () => {
  it('never prints the password, whatever the command and however it fails', async () => {
    const url = `postgres://someone:${SECRET}@127.0.0.1:1/nothing`
    for (const argv of [
      ['--url', url, 'stats'],
      ['--url', url, 'queue', 'status', 'emails'],
      ['--url', url, 'failed', 'list'],
      ['--url', url, 'migrate'],
      ['--url', `${url}?x=${SECRET}`, 'check'],
      ['--url', `postgres://someone:${SECRET}@[::1/x`, 'stats'],
      ['stats'],
    ]) {
      const run = await runCli(argv, { DATABASE_URL: url })
      expect(run.code, argv.join(' ')).not.toBe(0)
      expect(run.stdout + run.stderr, argv.join(' ')).not.toContain(SECRET)
    }
  }, 60_000)
})
