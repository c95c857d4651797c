import type { IddqueuePlugin } from '@iddqueue/core'
import { describe, expect, it } from 'vitest'
import { createDashboard, type DashboardAuditEvent } from '../src/index.js'
import { DashboardClient } from './dashboard-client.js'
import { insertRows, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** A plugin whose `revive` hook (inside each retry batch's transaction) can be held at batch `holdAt`. */
function gatedRevive(holdAt: number) {
  let calls = 0
  let release!: () => void
  const gate = new Promise<void>((resolve) => {
    release = resolve
  })
  let reached!: () => void
  const held = new Promise<void>((resolve) => {
    reached = resolve
  })
  const plugin: IddqueuePlugin = {
    name: 'test-gated-revive',
    middleware: {
      async revive() {
        calls++
        if (calls === holdAt) {
          reached()
          await gate
        }
      },
    },
  }
  return { plugin, held, release, calls: () => calls }
}

async function rejectedRows(queue: string, count: number): Promise<void> {
  await insertRows(db.sql, queue, [{ state: 'rejected', count }])
}

async function countStates(queue: string): Promise<Record<string, number>> {
  const rows = await db.sql`select state, count(*)::int as n from iddqueue.messages
    where queue = ${queue} group by state`
  return Object.fromEntries(rows.map((r) => [r.state as string, r.n as number]))
}

/** The operation page the bulk POST redirected to. */
function operationPath(response: Response): string {
  expect(response.status).toBe(303)
  const location = response.headers.get('location')!
  expect(location).toMatch(/^\/operations\/[0-9a-f-]{36}\?notice=/)
  return location.split('?')[0]!
}

async function waitForEnd(client: DashboardClient, path: string): Promise<string> {
  let body = ''
  await until(
    async () => {
      body = await client.page(path)
      return !body.includes('data-operation-state="running"')
    },
    20_000,
    `${path} to end`,
  )
  return body
}

describe('bulk operations over everything matching', () => {
  it('retries in bounded batches in the background, showing the running totals, then audits the end', async () => {
    const gated = gatedRevive(2)
    const broker = db.broker({ plugins: [gated.plugin] })
    const audits: DashboardAuditEvent[] = []
    const dashboard = createDashboard({
      broker,
      readOnly: false,
      bulkBatchSize: 10,
      onAudit: (event) => audits.push(event),
    })
    const client = new DashboardClient(dashboard)
    const queue = uniqueQueue('bulk')
    await rejectedRows(queue, 25)
    await rejectedRows(`${queue}_other`, 2)
    try {
      const path = operationPath(
        await client.post('/messages/bulk', {
          op: 'retry-matching',
          queue,
          state: 'rejected',
          return: `/messages?queue=${queue}&state=rejected`,
        }),
      )
      // The second batch is held inside its transaction: the first one's ten are committed.
      await gated.held
      const running = await client.page(path)
      expect(running).toContain('data-operation-state="running"')
      expect(running).toContain(
        '<span data-progress>10 messages retried</span> so far, 1 batches done',
      )
      expect(running).toContain('<progress max="25" value="10"></progress> 10 of 25 matching')
      // htmx re-fetches the region every second; without JavaScript the page reloads itself.
      expect(running).toContain('hx-trigger="every 1s"')
      expect(running).toContain('<noscript><meta http-equiv="refresh" content="2"></noscript>')
      expect(await countStates(queue)).toEqual({ queued: 10, rejected: 15 })
      expect(audits).toEqual([])

      gated.release()
      const done = await waitForEnd(client, path)
      expect(done).toContain('data-operation-state="done"')
      expect(done).toContain('Done: <span data-progress>25 messages retried</span>')
      expect(done).toContain('<progress max="25" value="25">')
      expect(done).not.toContain('hx-trigger="every 1s"')
      expect(done).not.toContain('http-equiv="refresh"')
      expect(done).toContain(`href="/messages?queue=${queue}&amp;state=rejected"`)
      expect(await countStates(queue)).toEqual({ queued: 25 })
      expect(await countStates(`${queue}_other`)).toEqual({ rejected: 2 })
      expect(gated.calls()).toBe(3)
      expect(audits.map((a) => [a.action, a.outcome, a.result])).toEqual([
        [{ kind: 'retry-matching', filter: { queue } }, 'done', { retried: 25, dryRun: false }],
      ])
      expect((await client.get('/operations/00000000-0000-4000-8000-000000000000')).status).toBe(
        404,
      )
    } finally {
      gated.release()
      await dashboard.close()
    }
  })

  it('cancels in batches and reports each batch', async () => {
    const broker = db.broker()
    const audits: DashboardAuditEvent[] = []
    const dashboard = createDashboard({
      broker,
      readOnly: false,
      bulkBatchSize: 5,
      onAudit: (event) => audits.push(event),
    })
    const client = new DashboardClient(dashboard)
    const queue = uniqueQueue('cancel')
    await insertRows(db.sql, queue, [{ state: 'queued', eta: '1 hour', count: 12 }])
    try {
      const path = operationPath(
        await client.post('/messages/bulk', { op: 'cancel-matching', queue, state: 'queued' }),
      )
      const done = await waitForEnd(client, path)
      expect(done).toContain(
        'Done: <span data-progress>12 messages cancelled, 0 cancellations requested from workers</span>',
      )
      expect(done).toContain('<progress max="12" value="12">')
      expect(await countStates(queue)).toEqual({ cancelled: 12 })
      expect(audits.map((a) => [a.action.kind, a.outcome, a.result])).toEqual([
        ['cancel-matching', 'done', { cancelled: 12, requested: 0, dryRun: false }],
      ])
    } finally {
      await dashboard.close()
    }
  })

  it('starts nothing when read-only, without the CSRF token, or when authorize says no', async () => {
    const queue = uniqueQueue('refused')
    await rejectedRows(queue, 3)
    const fields = { op: 'retry-matching', queue, state: 'rejected' }

    const readOnly = createDashboard({ broker: db.broker() })
    const reader = new DashboardClient(readOnly)
    expect((await reader.post('/messages/bulk', fields, { token: 'x'.repeat(32) })).status).toBe(
      403,
    )
    await readOnly.close()

    const audits: DashboardAuditEvent[] = []
    const refusing = createDashboard({
      broker: db.broker(),
      readOnly: false,
      authorize: (_request, action) => action.kind !== 'retry-matching',
      onAudit: (event) => audits.push(event),
    })
    const client = new DashboardClient(refusing)
    expect((await client.post('/messages/bulk', fields, { token: null })).status).toBe(403)
    expect(
      (await client.post('/messages/bulk', fields, { headers: { origin: 'http://evil.test' } }))
        .status,
    ).toBe(403)
    const refused = await client.post('/messages/bulk', fields)
    expect(refused.status).toBe(403)
    expect(refused.headers.get('location')).toBeNull()
    expect(audits.map((a) => [a.action.kind, a.outcome])).toEqual([['retry-matching', 'refused']])
    await refusing.close()
    expect(await countStates(queue)).toEqual({ rejected: 3 })
  })
})

describe('bulk retry of a selection in the failed view', () => {
  it('offers a box per failed message and retries exactly the ones ticked', async () => {
    const dashboard = createDashboard({ broker: db.broker(), readOnly: false })
    const client = new DashboardClient(dashboard)
    const queue = uniqueQueue('sel')
    await rejectedRows(queue, 3)
    const ids = (
      await db.sql`select id from iddqueue.messages where queue = ${queue} order by id`
    ).map((r) => r.id as string)
    try {
      const page = await client.page(`/failed?queue=${queue}`)
      expect(page).toContain('<form id="failed-selection" method="post" action="/messages/bulk">')
      for (const id of ids)
        expect(page).toContain(`name="ids" value="${id}" form="failed-selection"`)
      expect(page).toContain('form="failed-selection" name="op" value="retry-selected"')
      const response = await client.post('/messages/bulk', {
        op: 'retry-selected',
        ids: [ids[0]!, ids[2]!],
        return: `/failed?queue=${queue}`,
      })
      expect(response.status).toBe(303)
      expect(response.headers.get('location')).toMatch(
        new RegExp(`^/failed\\?queue=${queue}&notice=Retry\\+of\\+2\\+selected%3A\\+2\\+retried`),
      )
      const states = await db.sql`select id, state from iddqueue.messages where queue = ${queue}`
      expect(Object.fromEntries(states.map((r) => [r.id, r.state]))).toEqual({
        [ids[0]!]: 'queued',
        [ids[1]!]: 'rejected',
        [ids[2]!]: 'queued',
      })
    } finally {
      await dashboard.close()
    }
    const readOnly = createDashboard({ broker: db.broker() })
    const page = await new DashboardClient(readOnly).page(`/failed?queue=${queue}`)
    expect(page).not.toContain('failed-selection')
    expect(page).not.toContain('name="ids"')
    await readOnly.close()
  })
})
