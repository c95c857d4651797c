import { describe, expect, it } from 'vitest'
import { runCli } from './helpers.js'

describe('iddqueue sql grants', () => {
  it('prints the grants of a mode for a role, in the namespace given, without a database', async () => {
    const run = await runCli([
      '--schema',
      'jobs',
      'sql',
      'grants',
      '--role',
      'checkout',
      '--mode',
      'producer',
    ])
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toContain('grant usage on schema "jobs" to "checkout";')
    expect(run.stdout).toContain('grant insert, select (id,')
    expect(run.stdout).not.toContain('args')
  })

  it('refuses a mode it does not know, and a missing role, with exit 2', async () => {
    const bad = await runCli(['sql', 'grants', '--role', 'r', '--mode', 'root'])
    expect(bad).toMatchObject({ code: 2, stdout: '' })
    expect(bad.stderr).toContain('invalid --mode "root": expected producer, worker or admin')
    const missing = await runCli(['sql', 'grants', '--mode', 'worker'])
    expect(missing).toMatchObject({ code: 2, stdout: '' })
    expect(missing.stderr).toContain('--role')
  })
})
