import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { beforeEach, describe, expect, it } from 'vitest'
import { createScheduler } from '../../src/index.js'
import { scheduledMessages, setupDatabase, until } from '../helpers.js'

const db = setupDatabase()
const script = fileURLToPath(new URL('../fixtures/scheduler-child.mjs', import.meta.url))
const unique = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`

beforeEach(async () => {
  await db.sql`delete from iddqueue.schedules`
})

interface Child {
  readonly proc: ChildProcess
  readonly published: string[]
  readonly uncommitted: string[]
  ready: boolean
  started: boolean
  readonly exited: Promise<void>
}

function spawn(args: string[], env: Record<string, string> = {}): Child {
  const proc = fork(script, [db.url, ...args], { stdio: 'ignore', env: { ...process.env, ...env } })
  const child: Child = {
    proc,
    published: [],
    uncommitted: [],
    ready: false,
    started: false,
    exited: new Promise((resolve) => proc.once('exit', () => resolve())),
  }
  proc.on(
    'message',
    (m: { ready?: true; started?: true; published?: string[]; uncommitted?: string[] }) => {
      if (m.ready) child.ready = true
      if (m.started) child.started = true
      if (m.published) child.published.push(...m.published)
      if (m.uncommitted) child.uncommitted.push(...m.uncommitted)
    },
  )
  return child
}

async function stopAll(children: Child[]) {
  for (const child of children)
    if (child.proc.exitCode === null && child.proc.signalCode === null) child.proc.kill('SIGTERM')
  await Promise.all(children.map((c) => c.exited))
}

/** Every occurrence from the first to the last exactly once, on the grid, and no id reported by two processes. */
async function expectExactlyOnce(
  name: string,
  everyMs: number,
  children: Child[],
  atLeast: number,
) {
  const messages = await scheduledMessages(db.sql, name)
  expect(messages.length).toBeGreaterThanOrEqual(atLeast)
  const times = messages.map((m) => Date.parse(m.intendedAt))
  expect(times.slice(1).map((t, i) => t - times[i]!)).toEqual(times.slice(1).map(() => everyMs))
  const reported = children.flatMap((c) => c.published)
  expect(new Set(reported).size).toBe(reported.length)
  const [info] =
    await db.sql`select (extract(epoch from anchor_at) * 1000)::float8 as anchor from iddqueue.schedules where name = ${name}`
  expect(times[0]).toBe(info!.anchor)
}

describe('several scheduler processes', () => {
  it('three processes, a 1 s interval for 10 occurrences: exactly one message per occurrence, none missing', async () => {
    const name = unique('shared')
    await createScheduler(db.broker()).create({
      name,
      actor: 'beat',
      everyMs: 1_000,
      catchUp: { max: 100 },
    })
    const children = [0, 1, 2].map(() => spawn(['start']))
    try {
      await until(() => children.every((c) => c.ready), 60_000, 'three schedulers to be ready')
      for (const c of children) c.proc.send('go')
      await until(
        async () => (await scheduledMessages(db.sql, name)).length >= 10,
        60_000,
        'ten occurrences',
      )
    } finally {
      await stopAll(children)
    }
    await expectExactlyOnce(name, 1_000, children, 10)
  }, 120_000)

  it('three processes calling define() with the same set at the same moment: one schedule, no duplicate, no lost run', async () => {
    const name = unique('defined')
    const definitions = JSON.stringify([
      { name, actor: 'beat', everyMs: 1_000, catchUp: { max: 100 } },
    ])
    const children = [0, 1, 2].map(() => spawn(['define', definitions]))
    try {
      await until(() => children.every((c) => c.ready), 60_000, 'three schedulers to be ready')
      for (const c of children) c.proc.send('go')
      await until(
        async () => (await scheduledMessages(db.sql, name)).length >= 10,
        60_000,
        'ten occurrences',
      )
    } finally {
      await stopAll(children)
    }
    const [row] =
      await db.sql`select count(*)::int as n from iddqueue.schedules where name = ${name}`
    expect(row!.n).toBe(1)
    await expectExactlyOnce(name, 1_000, children, 10)
  }, 120_000)

  it('a scheduler killed between publish and commit: the occurrence stays due and is published once, with the same id', async () => {
    const name = unique('crash')
    const schedules = createScheduler(db.broker())
    const created = await schedules.create({ name, actor: 'beat', everyMs: 3_600_000 })
    const child = spawn(['start'], { CRASH_AFTER_PUBLISH: '1' })
    await until(() => child.ready, 60_000, 'the scheduler to be ready')
    child.proc.send('go')
    await child.exited
    expect(child.proc.signalCode).toBe('SIGKILL')
    expect(child.uncommitted).toHaveLength(1)
    expect(await scheduledMessages(db.sql, name)).toHaveLength(0)
    expect((await schedules.get(name))!.nextRunAt).toEqual(created.nextRunAt)
    // Its row lock went with its session: another scheduler takes the occurrence.
    let published: string[] = []
    await until(
      async () => {
        published = (await schedules.tick()).published.map((o) => o.messageId)
        return published.length > 0
      },
      30_000,
      'the occurrence to be published by a survivor',
    )
    expect(published).toEqual(child.uncommitted)
    expect(await scheduledMessages(db.sql, name)).toHaveLength(1)
  }, 120_000)

  it('schedulers killed (SIGKILL) at random points: each occurrence published exactly once', async () => {
    const name = unique('kill')
    const everyMs = 200
    await createScheduler(db.broker()).create({
      name,
      actor: 'beat',
      everyMs,
      catchUp: { max: 1_000 },
    })
    const children: Child[] = []
    const survivor = spawn(['start'])
    children.push(survivor)
    try {
      await until(() => survivor.ready, 60_000, 'the survivor to be ready')
      survivor.proc.send('go')
      for (let round = 0; round < 6; round++) {
        const victim = spawn(['start'])
        children.push(victim)
        await until(() => victim.ready, 60_000, 'a victim to be ready')
        victim.proc.send('go')
        await until(() => victim.started, 60_000, 'the victim to start')
        // A random point in its loop: sleeping, ticking, or inside a transaction.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 600))
        victim.proc.kill('SIGKILL')
        await victim.exited
      }
      const target = (await scheduledMessages(db.sql, name)).length + 5
      await until(
        async () => (await scheduledMessages(db.sql, name)).length >= target,
        60_000,
        'more occurrences after the kills',
      )
    } finally {
      await stopAll(children)
    }
    await expectExactlyOnce(name, everyMs, children, 6)
  }, 180_000)
})
