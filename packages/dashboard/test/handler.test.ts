import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { hostname } from 'node:os'
import { coordination } from '@iddqueue/coordination'
import { attemptHistory } from '@iddqueue/core'
import { results } from '@iddqueue/results'
import { createScheduler, scheduler } from '@iddqueue/scheduler'
import { describe, expect, it } from 'vitest'
import { liveHubOf } from '../src/create-dashboard.js'
import { DashboardData } from '../src/data/dashboard-data.js'
import { listMessages } from '../src/data/list-messages.js'
import { listWorkers } from '../src/data/list-workers.js'
import { escapeHtml } from '../src/html/html.js'
import {
  createDashboard,
  type Dashboard,
  type DashboardAction,
  type DashboardAuditEvent,
} from '../src/index.js'
import { DashboardClient, ORIGIN } from './dashboard-client.js'
import { drain, insertRows, setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

function setup(options: Partial<Parameters<typeof createDashboard>[0]> = {}) {
  const broker = db.broker({ plugins: [attemptHistory(), scheduler()] })
  const audits: DashboardAuditEvent[] = []
  const dashboard = createDashboard({
    broker,
    readOnly: false,
    onAudit: (event) => audits.push(event),
    ...options,
  } as Parameters<typeof createDashboard>[0])
  return { broker, dashboard, audits, client: new DashboardClient(dashboard) }
}

async function stateOf(id: string): Promise<string | undefined> {
  const [row] = await db.sql`select state from iddqueue.messages where id = ${id}`
  return row?.state as string | undefined
}

async function rejected(queue: string, count = 1): Promise<string[]> {
  await insertRows(db.sql, queue, [{ state: 'rejected', count }])
  const rows =
    await db.sql`select id from iddqueue.messages where queue = ${queue} and state = 'rejected' order by id`
  return rows.map((r) => r.id as string)
}

/** The text of each cell of the table row `<tr {attribute}="{key}">`, tags stripped. */
function rowCells(body: string, attribute: string, key: string): string[] {
  const row = new RegExp(`<tr ${attribute}="${key}">([\\s\\S]*?)</tr>`).exec(body)?.[1]
  expect(row, `a row ${attribute}="${key}"`).toBeDefined()
  return [...row!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) =>
    m[1]!
      .replace(/<[^>]+>/g, '')
      .replace(/\s+/g, ' ')
      .trim(),
  )
}

/** A date as `formatTime()` writes it: UTC, to the second. */
function shownTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ')
}

/** Opens a Server-Sent Events stream on the handler, as a tab's EventSource would. */
async function openStream(dashboard: Dashboard) {
  const controller = new AbortController()
  const response = await dashboard(new Request(`${ORIGIN}/events`, { signal: controller.signal }))
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toContain('text/event-stream')
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const read = (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      text += decoder.decode(value, { stream: true })
    }
  })().catch(() => {})
  await until(() => text.includes(': connected'), 10_000, 'the stream to open')
  return {
    text: () => text,
    /** `change` events received so far. */
    changes: () => text.split('event: change\n').length - 1,
    async close() {
      controller.abort()
      await read
    },
  }
}

describe('views', () => {
  it('serves every view with the security headers and a CSRF cookie', async () => {
    const { broker, dashboard, client } = setup()
    const queue = uniqueQueue()
    const actor = broker.actor('work', () => {}, { queue })
    const message = await actor.send()
    await rejected(queue)
    await createScheduler(broker).create({
      name: `s_${queue}`,
      actor: 'work',
      queue,
      everyMs: 60_000,
    })
    try {
      for (const path of [
        '/',
        `/queues/${queue}`,
        '/messages',
        `/messages?queue=${queue}&state=queued`,
        `/messages/${message.id}`,
        '/failed',
        `/failed?queue=${queue}`,
        '/workers',
        '/schedules',
      ]) {
        const response = await client.get(path)
        const body = await response.text()
        expect(response.status, `${path}: ${body.slice(0, 300)}`).toBe(200)
        expect(response.headers.get('content-security-policy')).toContain("script-src 'self'")
        expect(response.headers.get('content-security-policy')).not.toContain('unsafe-inline')
        expect(response.headers.get('x-frame-options')).toBe('DENY')
        expect(body).not.toMatch(/<script>|<script [^>]*>[^<]/)
      }
      expect(await client.page('/')).toContain(queue)
      expect(await client.page(`/queues/${queue}`)).toContain(`s_${queue}`)
      expect(await client.page('/messages')).toContain(message.id)
      expect(await client.page('/schedules')).toContain(`s_${queue}`)
      expect(client.cookie).toMatch(/^iddqueue_csrf=/)
    } finally {
      await dashboard.close()
    }
  })

  it('shows per queue the counts by state, ready, scheduled, oldest ready, done per hour and the paused badge', async () => {
    const { broker, dashboard, client } = setup()
    const busy = uniqueQueue('busy')
    const later = uniqueQueue('later')
    const idle = uniqueQueue('idle')
    await insertRows(db.sql, busy, [
      { state: 'queued', eta: '-3 hours', updated: '-3 hours', count: 2 },
      { state: 'queued', eta: '1 hour' },
      { state: 'consumed' },
      { state: 'done', updated: '-2 hours', count: 4 },
      { state: 'done', updated: '-5 minutes', count: 2 },
      { state: 'rejected', count: 3 },
      { state: 'cancelled' },
    ])
    await insertRows(db.sql, later, [{ state: 'queued', eta: '1 hour' }])
    await broker.pause(busy)
    // A paused queue that holds nothing is listed too, with its badge.
    await broker.pause(idle)
    try {
      const body = await client.page('/')
      const badge = '<span class="badge paused">paused</span>'
      // queue, ready, scheduled, oldest ready, queued, consumed, done, rejected, cancelled, done / hour
      expect(rowCells(body, 'data-queue', busy)).toEqual([
        `${busy} paused`,
        '2',
        '1',
        '3 h 0 m',
        '3',
        '1',
        '6',
        '3',
        '1',
        '2',
      ])
      expect(rowCells(body, 'data-queue', later)).toEqual([
        later,
        '0',
        '1',
        '–',
        '1',
        '0',
        '0',
        '0',
        '0',
        '0',
      ])
      expect(rowCells(body, 'data-queue', idle)).toEqual([
        `${idle} paused`,
        '0',
        '0',
        '–',
        '0',
        '0',
        '0',
        '0',
        '0',
        '0',
      ])
      const row = (queue: string) =>
        new RegExp(`<tr data-queue="${queue}">.*?</td>`, 's').exec(body)![0]
      expect(row(busy)).toContain(`<a href="/queues/${busy}">${busy}</a> ${badge}`)
      expect(row(idle)).toContain(badge)
      expect(row(later)).not.toContain(badge)
      expect(body).toContain(`<a href="/failed?queue=${busy}">3</a>`)
      // Every count is exact on a table this small: no estimate mark.
      expect(body).not.toContain('class="estimate"')
      // done / hour is the queue's chart total: the rows of 5 minutes ago, not those of 2 hours ago.
      expect(await client.page(`/queues/${busy}`)).toContain(
        'Last hour (this minute and the 59 before it): 2 done, 3 rejected',
      )
    } finally {
      await dashboard.close()
    }
  })

  it('serves the vendored htmx file, identical to the pinned htmx.org package', async () => {
    const { dashboard, client } = setup()
    const response = await client.get('/static/htmx.min.js')
    expect(response.headers.get('content-type')).toContain('javascript')
    const served = Buffer.from(await response.arrayBuffer())
    const require = createRequire(import.meta.url)
    const original = readFileSync(require.resolve('htmx.org/dist/htmx.min.js'))
    expect(served.equals(original)).toBe(true)
    expect((await client.get('/static/dashboard.js')).status).toBe(200)
    expect((await client.get('/static/nope.js')).status).toBe(404)
    await dashboard.close()
  })

  it('paginates messages with a keyset cursor and filters by state, time and args', async () => {
    const { broker, dashboard, client } = setup()
    const queue = uniqueQueue()
    const actor = broker.actor('page', (_n: number) => {}, { queue })
    const sent = []
    for (let i = 0; i < 55; i++) sent.push(await actor.send(i))
    const order = (
      await db.sql`select id from iddqueue.messages where queue = ${queue} order by id desc`
    ).map((r) => r.id as string)
    const first = await client.page(`/messages?queue=${queue}`)
    const ids = (body: string) => [...body.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1])
    expect(ids(first)).toEqual(order.slice(0, 50))
    const next = /href="([^"]+)" rel="next"/.exec(first)![1]!.replaceAll('&amp;', '&')
    const second = await client.page(next)
    expect(ids(second)).toEqual(order.slice(50))
    expect(second).not.toContain('rel="next"')
    const byArgs = await client.page(`/messages?queue=${queue}&args=${encodeURIComponent('[7]')}`)
    expect(byArgs).toContain(sent[7]!.id)
    expect(byArgs).not.toContain(sent[8]!.id)
    const future = await client.page(`/messages?queue=${queue}&from=2999-01-01T00:00:00Z`)
    expect(future).not.toContain(sent[0]!.id)
    expect((await client.get('/messages?state=nope')).status).toBe(400)
    expect((await client.get('/messages?args=%7Bnot')).status).toBe(400)
    await dashboard.close()
  })

  it("filters messages by actor: only that actor's, from every queue, newest first", async () => {
    const { dashboard, client } = setup()
    const [one, two] = [uniqueQueue('one'), uniqueQueue('two')]
    const [wanted, other] = [`${uniqueQueue('wanted')}.send`, uniqueQueue('other')]
    // Two actors in two queues, in every state, interleaved.
    for (const queue of [one, two])
      for (const state of ['queued', 'done', 'rejected'])
        for (const actor of [wanted, other])
          await db.sql`insert into iddqueue.messages (id, queue, actor, state)
            values (gen_random_uuid(), ${queue}, ${actor}, ${state})`
    const stored = async (where: { queue?: string }) =>
      (
        await db.sql`select id from iddqueue.messages where actor = ${wanted}
          and (${where.queue ?? null}::text is null or queue = ${where.queue ?? null}) order by id desc`
      ).map((r) => r.id as string)
    const ids = (body: string) => [...body.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1])
    const expected = await stored({})
    expect(expected).toHaveLength(6)
    expect(ids(await client.page(`/messages?actor=${wanted}`))).toEqual(expected)
    // With a queue too: both filters apply.
    const inTwo = await stored({ queue: two })
    expect(inTwo).toHaveLength(3)
    expect(ids(await client.page(`/messages?actor=${wanted}&queue=${two}`))).toEqual(inTwo)
    expect(ids(await client.page(`/messages?actor=${uniqueQueue('nobody')}`))).toEqual([])
    expect((await client.get('/messages?actor=no%20spaces')).status).toBe(400)
    await dashboard.close()
  })

  it('answers an args search over its statement timeout with the form and a clear error, not a 500', async () => {
    // searchTimeoutMs is the search's statement timeout; a lock the search
    // must wait for makes it run past it, however fast the machine.
    const errors: string[] = []
    const broker = db.broker({
      logger: {
        debug() {},
        info() {},
        warn() {},
        error: (message: string) => errors.push(message),
      },
    })
    const dashboard = createDashboard({ broker, searchTimeoutMs: 50 })
    const client = new DashboardClient(dashboard)
    // The same search on a dashboard with the default timeout finds the
    // message, whatever the machine's load; only the locked one times out.
    const patient = createDashboard({ broker })
    const patientClient = new DashboardClient(patient)
    const queue = uniqueQueue()
    const message = await broker.actor('search', (_n: number) => {}, { queue }).send(7)
    const search = `/messages?queue=${queue}&args=${encodeURIComponent('[7]')}`
    expect(await patientClient.page(search)).toContain(message.id)
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    let locked = () => {}
    const isLocked = new Promise<void>((resolve) => {
      locked = resolve
    })
    const holder = db.sql.begin(async (tx) => {
      await tx`lock table iddqueue.messages in access exclusive mode`
      locked()
      await released
    })
    try {
      await isLocked
      const response = await client.get(search)
      const body = await response.text()
      expect(response.status).toBe(200)
      expect(body).toContain(
        '<p class="error" role="alert">The args search took longer than 50 ms and was stopped; narrow it with a queue, actor, state or time range.</p>',
      )
      // The filter form is still there, filled in, and no message is listed.
      expect(body).toContain(`<input name="queue" value="${queue}"`)
      expect(body).not.toContain(message.id)
      expect(body).not.toContain('see the server log')
      expect(errors).toEqual([])
    } finally {
      release()
      await holder
    }
    // Once the lock is gone the same search answers.
    expect(await patientClient.page(search)).toContain(message.id)
    await dashboard.close()
    await patient.close()
  })
})

describe('message view', () => {
  it('shows the attempt history of a broker nobody readied yet', async () => {
    const broker = db.broker({ plugins: [attemptHistory()] })
    const dashboard = createDashboard({ broker })
    const queue = uniqueQueue()
    const [id] = await rejected(queue)
    const page = await new DashboardClient(dashboard).page(`/messages/${id}`)
    expect(page).toContain('Attempt history')
    expect(page).toContain('No attempt recorded')
    await dashboard.close()
  })
})

describe('message view, failure', () => {
  it('shows the last failure: its type, text, attempt and time; its stack only with the payload', async () => {
    const { broker, dashboard, client } = setup()
    const queue = uniqueQueue()
    class PaymentDeclined extends Error {}
    const actor = broker.actor(
      'charge',
      (_order: number) => {
        throw new PaymentDeclined('card <4111> declined & kept')
      },
      { queue, maxRetries: 0 },
    )
    const message = await actor.send(42)
    await drain(broker, [queue])
    const [row] =
      await db.sql`select state, failure from iddqueue.messages where id = ${message.id}`
    expect(row!.state).toBe('rejected')
    const failure = row!.failure as {
      type: string
      message: string
      at: string
      attempt: number
      stack: string
    }
    expect(failure).toMatchObject({
      type: 'PaymentDeclined',
      message: 'card <4111> declined & kept',
      attempt: 1,
    })
    expect(failure.stack).toMatch(/^Error: card <4111> declined & kept\n\s+at /)
    try {
      const page = await client.page(`/messages/${message.id}`)
      expect(page).toContain(
        `<h2>Last failure</h2>\n<p><strong>PaymentDeclined</strong> at attempt 1, ${failure.at}</p>\n<pre>card &lt;4111&gt; declined &amp; kept</pre>\n<p class="muted">The stack is shown with the payload.</p>`,
      )
      expect(page).not.toContain('<summary>Stack</summary>')
      expect(page).not.toContain(escapeHtml(failure.stack.split('\n')[1]!))
      // The attempt history has the same failure, and the message can be retried.
      expect(page).toContain('<td>PaymentDeclined card &lt;4111&gt; declined &amp; kept</td>')
      expect(page).toContain(`action="/messages/${message.id}/retry"`)
      const shown = await client.page(`/messages/${message.id}?payload=1`)
      expect(shown).toContain(
        `<pre>card &lt;4111&gt; declined &amp; kept</pre>\n<details><summary>Stack</summary><pre>${escapeHtml(failure.stack)}</pre></details>`,
      )
      expect(shown).not.toContain('The stack is shown with the payload.')
    } finally {
      await dashboard.close()
    }
  })
})

describe('workers view', () => {
  it('lists a running worker: host, pid, queues, concurrency, the message it holds, heartbeat age', async () => {
    const broker = db.broker()
    const dashboard = createDashboard({ broker })
    const client = new DashboardClient(dashboard)
    const queue = uniqueQueue()
    let started!: () => void
    const running = new Promise<void>((resolve) => {
      started = resolve
    })
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const actor = broker.actor(
      'hold',
      async () => {
        started()
        await gate
      },
      { queue },
    )
    const message = await actor.send()
    const worker = broker.worker({ queues: [queue], concurrency: 3, pollIntervalMs: 50 })
    await worker.start()
    try {
      await running
      const [held] =
        await db.sql`select state, worker_id from iddqueue.messages where id = ${message.id}`
      expect(held).toEqual({ state: 'consumed', worker_id: worker.id })
      const [registered] =
        await db.sql`select started_at from iddqueue.workers where id = ${worker.id}`
      const body = await client.page('/workers')
      const cells = rowCells(body, 'data-id', worker.id)
      expect(cells.slice(0, 7)).toEqual([
        worker.id,
        hostname(),
        String(process.pid),
        queue,
        '3',
        '1',
        shownTime(registered!.started_at as Date),
      ])
      expect(cells[7]).toMatch(/^(\d+ ms|\d+ s|\d+ m \d+ s) ago$/)
    } finally {
      release()
      await worker.stop()
    }
    expect(await stateOf(message.id)).toBe('done')
    // A stopped worker deregisters: the view no longer lists it.
    const after = await client.page('/workers')
    expect(after).not.toContain(worker.id)
    await dashboard.close()
  })
})

describe('schedules view', () => {
  it('disables and enables a schedule, changing the schedules table, and shows its next run', async () => {
    const { broker, dashboard, client, audits } = setup()
    const queue = uniqueQueue()
    const name = `hourly_${queue}`
    broker.actor('report', () => {}, { queue })
    const schedules = createScheduler(broker)
    await schedules.create({ name, actor: 'report', queue, everyMs: 3_600_000 })
    const stored = async () => {
      const [row] =
        await db.sql`select enabled, next_run_at from iddqueue.schedules where name = ${name}`
      return row as { enabled: boolean; next_run_at: Date }
    }
    try {
      const created = await stored()
      expect(created.enabled).toBe(true)
      // name, actor, queue, timing, next run, last run, enabled, action
      expect(rowCells(await client.page('/schedules'), 'data-schedule', name)).toEqual([
        name,
        'report',
        queue,
        'every 1 h 0 m',
        shownTime(created.next_run_at),
        '–',
        'yes',
        'Disable',
      ])

      const disable = await client.post(`/schedules/${name}/disable`, { return: '/schedules' })
      expect(disable.status).toBe(303)
      const disabled = await stored()
      expect(disabled.enabled).toBe(false)
      expect((await schedules.get(name))!.enabled).toBe(false)
      const afterDisable = await client.page(disable.headers.get('location')!)
      expect(afterDisable).toContain(
        `<p class="notice" role="status">Schedule ${name} disabled.</p>`,
      )
      expect(rowCells(afterDisable, 'data-schedule', name)).toEqual([
        name,
        'report',
        queue,
        'every 1 h 0 m',
        shownTime(disabled.next_run_at),
        '–',
        'disabled',
        'Enable',
      ])
      expect(afterDisable).toContain(`action="/schedules/${name}/enable"`)

      const enable = await client.post(`/schedules/${name}/enable`, { return: '/schedules' })
      expect(enable.status).toBe(303)
      const enabled = await stored()
      expect(enabled.enabled).toBe(true)
      expect((await schedules.get(name))!.enabled).toBe(true)
      const afterEnable = await client.page(enable.headers.get('location')!)
      expect(afterEnable).toContain(`<p class="notice" role="status">Schedule ${name} enabled.</p>`)
      expect(rowCells(afterEnable, 'data-schedule', name)).toEqual([
        name,
        'report',
        queue,
        'every 1 h 0 m',
        shownTime(enabled.next_run_at),
        '–',
        'yes',
        'Disable',
      ])
      expect(audits.map((a) => [a.action, a.outcome])).toEqual([
        [{ kind: 'schedule-disable', name }, 'done'],
        [{ kind: 'schedule-enable', name }, 'done'],
      ])
    } finally {
      await dashboard.close()
    }
  })
})

describe('queue limits', () => {
  it("shows the queue's limits when the coordination plugin is installed", async () => {
    const coord = coordination()
    const broker = db.broker({ plugins: [coord] })
    const dashboard = createDashboard({ broker })
    const queue = uniqueQueue()
    const client = new DashboardClient(dashboard)
    expect(await client.page(`/queues/${queue}`)).toContain('No limit on this queue')
    await coord.setLimit({ queue }, { concurrency: 3, rate: { limit: 10, periodMs: 1_000 } })
    const page = await client.page(`/queues/${queue}`)
    expect(page).toContain(`data-limit="queue:${queue}"`)
    expect(page).toContain('10 per 1 s')
    const plain = createDashboard({ broker: db.broker() })
    expect(await new DashboardClient(plain).page(`/queues/${queue}`)).not.toContain(
      '<h2>Limits</h2>',
    )
    await plain.close()
    await dashboard.close()
  })
})

describe('stored results', () => {
  it('shows a stored result, its value only with the payload and through redact', async () => {
    const broker = db.broker({ plugins: [attemptHistory(), results()] })
    const dashboard = createDashboard({
      broker,
      redact: (value, { field }) => (field === 'result' ? { masked: true } : value),
    })
    const queue = uniqueQueue()
    const actor = broker.actor('answer', () => ({ secret: 'forty-two' }), {
      queue,
      storeResults: true,
    })
    const message = await actor.send()
    const worker = broker.worker({ queues: [queue], pollIntervalMs: 50 })
    await worker.start()
    await message.result({ timeoutMs: 30_000 })
    await worker.stop()
    const client = new DashboardClient(dashboard)
    const page = await client.page(`/messages/${message.id}`)
    expect(page).toContain('<h2>Result</h2><p>success')
    expect(page).not.toContain('forty-two')
    const shown = await client.page(`/messages/${message.id}?payload=1`)
    expect(shown).toContain('masked')
    expect(shown).not.toContain('forty-two')
    expect(shown).toMatch(/<td>successful<\/td>/)
    await dashboard.close()
  })
})

describe('base path', () => {
  it('answers only below its base path and links within it', async () => {
    const { dashboard, client } = setup({ basePath: '/admin/queues/' })
    expect(dashboard.basePath).toBe('/admin/queues')
    expect((await client.get('/')).status).toBe(404)
    expect((await client.get('/admin/queuesx')).status).toBe(404)
    const body = await client.page('/admin/queues')
    expect(body).toContain('href="/admin/queues/messages"')
    expect(body).toContain('src="/admin/queues/static/htmx.min.js"')
    expect(client.cookie).toBeDefined()
    const set = (
      await new DashboardClient(dashboard).get('/admin/queues/workers')
    ).headers.getSetCookie()[0]
    expect(set).toContain('Path=/admin/queues')
    expect(set).toContain('HttpOnly')
    expect(set).toContain('SameSite=Strict')
    const queue = uniqueQueue()
    const response = await client.post(`/admin/queues/queues/${queue}/pause`, {
      return: `/queues/${queue}`,
    })
    expect(response.status).toBe(303)
    expect(response.headers.get('location')).toMatch(
      new RegExp(`^/admin/queues/queues/${queue}\\?notice=`),
    )
    expect(() => createDashboard({ broker: db.broker(), basePath: 'no-slash' })).toThrow(/basePath/)
    await dashboard.close()
  })
})

describe('read-only mode', () => {
  it('is the default: no buttons, every mutation refused, nothing changed', async () => {
    const broker = db.broker()
    const dashboard = createDashboard({ broker })
    const client = new DashboardClient(dashboard)
    const queue = uniqueQueue()
    const [id] = await rejected(queue)
    const page = await client.page(`/messages/${id}`)
    expect(page).not.toContain('method="post"')
    expect(page).toContain('read-only')
    for (const [path, fields] of [
      [`/messages/${id}/retry`, {}],
      [`/queues/${queue}/pause`, {}],
      ['/messages/bulk', { op: 'retry-selected', ids: id! }],
    ] as const) {
      const response = await client.post(path, fields, { token: 'x'.repeat(32) })
      expect(response.status, path).toBe(403)
    }
    expect(await stateOf(id!)).toBe('rejected')
    expect(await broker.isPaused(queue)).toBe(false)
    await dashboard.close()
  })
})

describe('CSRF', () => {
  it('refuses a mutation without the token, with a wrong one, or from another origin', async () => {
    const { broker, dashboard, client, audits } = setup()
    const queue = uniqueQueue()
    await client.page('/')
    const refusals = [
      await client.post(`/queues/${queue}/pause`, {}, { token: null }),
      await client.post(`/queues/${queue}/pause`, {}, { token: 'A'.repeat(32) }),
      await client.post(`/queues/${queue}/pause`, {}, { headers: { origin: 'http://evil.test' } }),
      await client.post(
        `/queues/${queue}/pause`,
        {},
        { headers: { 'sec-fetch-site': 'cross-site' } },
      ),
      // A fresh browser (no cookie) cannot replay someone else's token.
      await new DashboardClient(dashboard).post(
        `/queues/${queue}/pause`,
        {},
        { token: client.token! },
      ),
    ]
    for (const response of refusals) expect(response.status).toBe(403)
    expect(await broker.isPaused(queue)).toBe(false)
    expect(audits).toEqual([])
    expect((await client.post(`/queues/${queue}/pause`)).status).toBe(303)
    expect(await broker.isPaused(queue)).toBe(true)
    await dashboard.close()
  })
})

describe('refusals of any value', () => {
  // String() throws on an object without a prototype, JSON.stringify on a
  // bigint: the refusal must still be InvalidOptionError, naming the value.
  it.each([
    [{ bulkBatchSize: 1n }, 'Invalid bulkBatchSize 1n: expected an integer from 1 to 10000'],
    [{ readOnly: Object.create(null) }, 'Invalid readOnly an object: expected true or false'],
    [{ basePath: 1n }, 'Invalid basePath 1n: expected a path such as /admin/queues'],
    [
      { pollIntervalMs: Object.create(null) },
      'Invalid pollIntervalMs an object: expected a number from 250 to 2147483647',
    ],
    [{ searchTimeoutMs: 5n }, 'Invalid searchTimeoutMs 5n: expected a number from 1 to 2147483647'],
    // A Node timer fires after 1 ms past 2^31 - 1: the live poll would query in a loop.
    [
      { pollIntervalMs: 2 ** 31 },
      'Invalid pollIntervalMs 2147483648: expected a number from 250 to 2147483647',
    ],
    // PostgreSQL refused it as statement_timeout: every args search answered 500.
    [
      { searchTimeoutMs: 1e12 },
      'Invalid searchTimeoutMs 1000000000000: expected a number from 1 to 2147483647',
    ],
  ])('createDashboard(%o)', (options, text) => {
    expect(() => createDashboard({ broker: db.broker(), ...options } as never)).toThrow(
      expect.objectContaining({ name: 'InvalidOptionError', message: text }),
    )
  })

  it.each([
    [{}, 'Invalid broker an object: expected a broker from createBroker()'],
    [1n, 'Invalid broker 1n: expected a broker from createBroker()'],
  ])('refuses a broker that is not one (%o) before polling anything', (broker, text) => {
    expect(() => createDashboard({ broker } as never)).toThrow(
      expect.objectContaining({ name: 'InvalidOptionError', message: text }),
    )
  })

  it('refuses plugins that are not an array before creating a broker', () => {
    expect(() => createDashboard({ url: db.url, plugins: 1n } as never)).toThrow(
      expect.objectContaining({
        name: 'InvalidOptionError',
        message: 'Invalid plugins 1n: expected an array of plugins',
      }),
    )
  })

  it('names any cursor the lists refuse', async () => {
    const data = new DashboardData(db.broker())
    for (const [run, text] of [
      [() => listWorkers(data, { after: 1n as never }), 'Invalid cursor 1n: expected a UUID'],
      [
        () => listMessages(data, {}, { before: Object.create(null), searchTimeoutMs: 1_000 }),
        'Invalid cursor an object: expected a UUID',
      ],
    ] as const) {
      const error = await run().catch((caught: unknown) => caught)
      expect((error as Error).name).toBe('InvalidOptionError')
      expect((error as Error).message).toBe(text)
    }
  })

  it('answers 500 when an authorize hook throws a value String() throws on', async () => {
    const { client, dashboard, audits } = setup({
      authorize: () => {
        throw Object.create(null)
      },
    })
    // It threw again while logging the failure: the request itself rejected.
    const response = await client.post(`/queues/${uniqueQueue()}/pause`, {})
    expect(response.status).toBe(500)
    expect(audits).toEqual([])
    await dashboard.close()
  })
})

describe('authorization and audit', () => {
  it('asks authorize for every mutation and audits each outcome', async () => {
    const asked: DashboardAction[] = []
    let allow = false
    const { broker, dashboard, client, audits } = setup({
      authorize: (request, action) => {
        expect(request.url.startsWith(ORIGIN)).toBe(true)
        asked.push(action)
        return allow
      },
      identify: () => 'ada',
    })
    const queue = uniqueQueue()
    const ids = await rejected(queue, 3)
    const actor = broker.actor('later', () => {}, { queue: `${queue}_q` })
    const queued = await actor.sendWithOptions({ args: [], delayMs: 3_600_000 })
    const posts: [string, Record<string, string | string[]>][] = [
      [`/queues/${queue}/pause`, {}],
      [`/queues/${queue}/resume`, {}],
      [`/messages/${ids[0]}/retry`, {}],
      [`/messages/${queued.id}/cancel`, {}],
      ['/messages/bulk', { op: 'retry-selected', ids: [ids[1]!] }],
      ['/messages/bulk', { op: 'cancel-selected', ids: [queued.id] }],
      ['/messages/bulk', { op: 'retry-matching', queue, state: 'rejected' }],
      ['/messages/bulk', { op: 'cancel-matching', queue: `${queue}_q`, state: 'queued' }],
      ['/schedules/nightly/disable', {}],
      ['/schedules/nightly/enable', {}],
    ]
    for (const [path, fields] of posts) {
      expect((await client.post(path, fields)).status, path).toBe(403)
    }
    expect(asked.map((a) => a.kind)).toEqual([
      'pause',
      'resume',
      'retry',
      'cancel',
      'retry-selected',
      'cancel-selected',
      'retry-matching',
      'cancel-matching',
      'schedule-disable',
      'schedule-enable',
    ])
    expect(audits.map((a) => a.outcome)).toEqual(new Array(posts.length).fill('refused'))
    expect(audits[0]).toMatchObject({ user: 'ada', action: { kind: 'pause', queue } })
    for (const id of ids) expect(await stateOf(id)).toBe('rejected')
    expect(await stateOf(queued.id)).toBe('queued')

    allow = true
    audits.length = 0
    expect((await client.post(`/messages/${ids[0]}/retry`)).status).toBe(303)
    expect(await stateOf(ids[0]!)).toBe('queued')
    expect(
      (await client.post('/messages/bulk', { op: 'retry-selected', ids: [ids[1]!] })).status,
    ).toBe(303)
    expect(await stateOf(ids[1]!)).toBe('queued')
    // Everything matching runs in the background: its page says when it has ended.
    const matching = await client.post('/messages/bulk', {
      op: 'retry-matching',
      queue,
      state: 'rejected',
    })
    expect(matching.status).toBe(303)
    const operation = matching.headers.get('location')!.split('?')[0]!
    await until(
      async () => (await client.page(operation)).includes('data-operation-state="done"'),
      20_000,
      'the bulk retry to end',
    )
    expect(await stateOf(ids[2]!)).toBe('queued')
    expect((await client.post(`/messages/${queued.id}/cancel`)).status).toBe(303)
    expect(await stateOf(queued.id)).toBe('cancelled')
    expect(audits.map((a) => [a.action.kind, a.outcome])).toEqual([
      ['retry', 'done'],
      ['retry-selected', 'done'],
      ['retry-matching', 'done'],
      ['cancel', 'done'],
    ])
    expect(audits[2]!.result).toEqual({ retried: 1, dryRun: false })
    // "All matching" is offered only for what core's bulk filters can express.
    const refused = await client.post('/messages/bulk', {
      op: 'retry-matching',
      queue,
      state: 'rejected',
      args: '[1]',
    })
    expect(refused.status).toBe(400)
    await dashboard.close()
  })
})

describe('payload and redaction', () => {
  it('hides arguments until asked, asks authorize, and passes them through redact', async () => {
    let allowPayload = true
    const { broker, dashboard, client } = setup({
      authorize: (_request, action) => action.kind !== 'payload' || allowPayload,
      redact: (value, context) =>
        context.field === 'args' ? (value as unknown[]).map(() => '[redacted]') : value,
    })
    const queue = uniqueQueue()
    const actor = broker.actor('secret', (_card: string) => {}, { queue })
    const message = await actor.send('4111-1111-1111-1111')
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    await db.sql`update iddqueue.messages set options = ${db.sql.json({ trace: { traceparent } })} where id = ${message.id}`
    const hidden = await client.page(`/messages/${message.id}`)
    expect(hidden).toContain(traceparent)
    expect(hidden).not.toContain('4111')
    expect(hidden).toContain('Show the payload')
    const shown = await client.page(`/messages/${message.id}?payload=1`)
    expect(shown).toContain('[redacted]')
    expect(shown).not.toContain('4111')
    expect(await client.page(`/messages?queue=${queue}`)).not.toContain('4111')
    allowPayload = false
    const refused = await client.get(`/messages/${message.id}?payload=1`)
    expect(refused.status).toBe(403)
    expect(await refused.text()).not.toContain('redacted')
    await dashboard.close()
  })
})

describe('live events', () => {
  it('streams a change when a message is sent from elsewhere', async () => {
    const { dashboard } = setup({ pollIntervalMs: 250 })
    const queue = uniqueQueue()
    const streams = await Promise.all([1, 2, 3].map(() => openStream(dashboard)))
    const other = db.broker()
    await other.actor('outside', () => {}, { queue }).send()
    await until(
      () => streams.every((s) => s.changes() > 0),
      20_000,
      'a change event on every stream',
    )
    await Promise.all(streams.map((s) => s.close()))
    await dashboard.close()
  })

  it('feeds every stream from one shared poll, and polls nothing once the last stream closed', async () => {
    // The timer poll is an hour away: every poll below is the one a wake-up
    // notification triggers, so each can be counted.
    const broker = db.broker()
    const dashboard = createDashboard({ broker, pollIntervalMs: 3_600_000 })
    const hub = liveHubOf(dashboard)
    const queue = uniqueQueue()
    // Another broker, so the wake-ups reach the dashboard through PostgreSQL's NOTIFY.
    const outside = db.broker().actor('outside', () => {}, { queue })
    const stored = async () =>
      (await db.sql`select count(*)::int as n from iddqueue.messages where queue = ${queue}`)[0]!
        .n as number
    try {
      // No stream, no poll.
      expect(hub.polling).toBe(false)
      expect(hub.polls).toBe(0)

      const first = await openStream(dashboard)
      const second = await openStream(dashboard)
      expect(hub.size).toBe(2)
      await hub.listening()
      expect(hub.polls).toBe(0)

      // One send, one poll, one change on each stream.
      await outside.send()
      await until(
        () => first.changes() === 1 && second.changes() === 1,
        20_000,
        'the first change on both streams',
      )
      expect(hub.polls).toBe(1)
      await outside.send()
      await until(
        () => first.changes() === 2 && second.changes() === 2,
        20_000,
        'the second change on both streams',
      )
      expect(hub.polls).toBe(2)
      expect(await stored()).toBe(2)

      // One stream left: the same single poll feeds it.
      await first.close()
      await until(() => hub.size === 1, 10_000, 'the first stream to leave the hub')
      expect(hub.polling).toBe(true)
      await outside.send()
      await until(() => second.changes() === 3, 20_000, 'the third change on the second stream')
      expect(hub.polls).toBe(3)
      expect(first.changes()).toBe(2)

      // The last stream closes: no timer, no pending poll, no LISTEN left.
      await second.close()
      await until(() => hub.size === 0, 10_000, 'the second stream to leave the hub')
      expect(hub.polling).toBe(false)
      // A wake-up that reaches the dashboard's broker (a probe of ours hears
      // it) starts no poll.
      let heard = 0
      const stopProbe = await broker.subscribe(broker.namespace.channel('wake'), () => {
        heard++
      })
      await outside.send()
      await until(() => heard === 1, 20_000, 'the probe to hear the fourth send')
      expect(hub.polling).toBe(false)
      expect(hub.polls).toBe(3)
      expect(second.changes()).toBe(3)
      expect(await stored()).toBe(4)
      await stopProbe()
    } finally {
      await dashboard.close()
    }
  })
})
