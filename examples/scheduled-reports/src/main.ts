/**
 * iddqueue scheduler example: schedules declared in code, published by the
 * worker process itself (`runInWorkers`), and a handler that writes one
 * report per occurrence, keyed by the occurrence's intended time, so a
 * redelivered message never writes a second report.
 *
 * Uses DATABASE_URL when set; otherwise starts an embedded PostgreSQL and
 * stops it at the end. Everything lives in its own schema, dropped at the end.
 *
 *   pnpm --filter @iddqueue-example/scheduled-reports start
 *   pnpm --filter @iddqueue-example/scheduled-reports start -- --reports 10
 *
 * Exits with an error when the reports written are not one per occurrence.
 */
import assert from 'node:assert/strict'
import { parseArgs } from 'node:util'
import { type ActorContext, createBroker } from '@iddqueue/core'
import { createScheduler, scheduledOccurrence, scheduler } from '@iddqueue/scheduler'
import { startTestDatabase } from '@iddqueue/testing'
import postgres from 'postgres'

const { values } = parseArgs({ options: { reports: { type: 'string', default: '5' } } })
const wanted = Number(values.reports)
if (!Number.isInteger(wanted) || wanted < 1)
  throw new Error(`--reports must be a positive integer, got ${values.reports}`)

const server = await startTestDatabase({ log: (line) => console.error(line) })
const schema = 'iddqueue_scheduled_reports'
const sql = postgres(server.url, { max: 2, onnotice: () => {} })
const broker = createBroker({
  url: server.url,
  namespace: { schema },
  // The worker process also publishes due occurrences: no separate scheduler process.
  plugins: [scheduler({ runInWorkers: true })],
})

try {
  await sql.unsafe(`drop schema if exists ${schema} cascade`)
  await broker.migrate()
  await sql.unsafe(`create table ${schema}.reports (
    account integer not null,
    period timestamptz not null,
    written_at timestamptz not null default now(),
    primary key (account, period)
  )`)

  // The handler: one report per (account, intended time), whatever the deliveries.
  broker.actor(
    'generate_report',
    async (account: number, ctx: ActorContext) => {
      const occurrence = scheduledOccurrence(ctx.message)
      if (!occurrence) throw new Error('generate_report expects a scheduled message')
      await sql`insert into ${sql(schema)}.reports (account, period)
        values (${account}, ${occurrence.intendedAt}) on conflict do nothing`
    },
    { queue: 'reports' },
  )

  const schedules = createScheduler(broker)
  // Declared in code: every process may run this at start; an unchanged list writes nothing.
  const defined = await schedules.define(
    [
      { name: 'account-42-every-second', actor: 'generate_report', args: [42], everyMs: 1_000 },
      {
        name: 'account-42-nightly',
        actor: 'generate_report',
        args: [42],
        cron: '30 2 * * *',
        timezone: 'Europe/Paris',
      },
    ],
    { prune: true },
  )
  console.error(`defined: created ${defined.created.join(', ')}`)
  const again = await schedules.define(
    [
      { name: 'account-42-every-second', actor: 'generate_report', args: [42], everyMs: 1_000 },
      {
        name: 'account-42-nightly',
        actor: 'generate_report',
        args: [42],
        cron: '30 2 * * *',
        timezone: 'Europe/Paris',
      },
    ],
    { prune: true },
  )
  assert.deepEqual(again.unchanged.length, 2, 'a second define() of the same list changes nothing')

  const nightly = await schedules.nextRuns('account-42-nightly', 3)
  console.error(
    `nightly runs (02:30 Paris time): ${nightly.map((d) => d.toISOString()).join(', ')}`,
  )

  const worker = broker.worker({ queues: ['reports'] })
  await worker.start()
  const count = async () => {
    const [row] = await sql`select count(*)::int as n from ${sql(schema)}.reports`
    return row!.n as number
  }
  const deadline = Date.now() + 60_000
  while ((await count()) < wanted) {
    if (Date.now() > deadline) throw new Error(`fewer than ${wanted} reports after 60 s`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await worker.stop()

  // One report per occurrence: consecutive intended times, one second apart.
  const rows = await sql`select (extract(epoch from period) * 1000)::float8 as ms
    from ${sql(schema)}.reports where account = 42 order by period`
  const times = rows.map((row) => row.ms as number)
  assert.ok(times.length >= wanted, `expected at least ${wanted} reports, got ${times.length}`)
  for (let i = 1; i < times.length; i++) assert.equal(times[i]! - times[i - 1]!, 1_000)
  const [messages] = await sql`select count(*)::int as n from ${sql(schema)}.messages
    where options -> 'schedule' ->> 'name' = 'account-42-every-second'`
  assert.ok(messages!.n >= times.length, 'every report came from a scheduled message')
  console.log(
    `${times.length} reports, one per occurrence, from ${new Date(times[0]!).toISOString()}`,
  )
} finally {
  await broker.close()
  await sql.unsafe(`drop schema if exists ${schema} cascade`).catch(() => {})
  await sql.end()
  await server.stop()
}
