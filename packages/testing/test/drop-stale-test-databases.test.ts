import { spawnSync } from 'node:child_process'
import { describe, expect, inject, it } from 'vitest'
import { dropStaleTestDatabases } from '../src/index.js'
import { databaseExists, withSql } from './helpers.js'

const serverUrl = inject('iddqueueServerUrl')

describe('dropStaleTestDatabases', () => {
  it('drops databases of dead pids and keeps those of live ones', async () => {
    // A pid that surely existed and is gone now.
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])
    const deadPid = Number(child.stdout.toString())
    expect(deadPid).toBeGreaterThan(0)

    const prefix = 'iddqueue_stale'
    const dead = `${prefix}_${deadPid}_00aa11bb22cc33dd`
    const live = `${prefix}_${process.pid}_00aa11bb22cc33dd`
    const unrelated = `${prefix}_not_a_pid`
    await withSql(serverUrl, async (sql) => {
      for (const name of [dead, live, unrelated]) await sql`create database ${sql(name)}`
    })
    try {
      expect(await dropStaleTestDatabases(serverUrl, prefix)).toBe(1)
      expect(await databaseExists(serverUrl, dead)).toBe(false)
      expect(await databaseExists(serverUrl, live)).toBe(true)
      expect(await databaseExists(serverUrl, unrelated)).toBe(true)
      expect(await dropStaleTestDatabases(serverUrl, prefix)).toBe(0)
    } finally {
      await withSql(serverUrl, async (sql) => {
        for (const name of [dead, live, unrelated]) {
          await sql`drop database if exists ${sql(name)} with (force)`
        }
      })
    }
  })
})
