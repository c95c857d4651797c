import { type ActorContext, InvalidOptionError } from '@iddqueue/core'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { workerMetrics } from '../src/index.js'
import { setupDatabase, uniqueQueue, until } from './helpers.js'

const db = setupDatabase()

/** `name{labels}` → value from a registry's JSON, for one queue. */
async function values(registry: Registry, queue: string) {
  const out = new Map<string, number>()
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const v of metric.values) {
      const labels = v.labels as Record<string, string>
      if (labels.queue !== undefined && labels.queue !== queue) continue
      const suffix = (v as { metricName?: string }).metricName ?? metric.name
      const extra = Object.entries(labels)
        .filter(([k]) => k !== 'queue')
        .map(([k, val]) => `${k}=${val}`)
        .join(',')
      out.set(extra ? `${suffix}{${extra}}` : suffix, v.value)
    }
  }
  return out
}

describe('workerMetrics', () => {
  it('counts outcomes, running handlers, durations and waits after a run', async () => {
    const registry = new Registry()
    const broker = db.broker({ plugins: [workerMetrics({ registry })] })
    const queue = uniqueQueue('wm')
    let flakyRuns = 0
    const ok = broker.actor('ok', () => 'fine', { queue })
    const flaky = broker.actor(
      'flaky',
      () => {
        if (flakyRuns++ === 0) throw new Error('first attempt fails')
      },
      { queue, maxRetries: 3, minBackoffMs: 1, maxBackoffMs: 5 },
    )
    const bad = broker.actor(
      'bad',
      () => {
        throw new Error('never works')
      },
      { queue, maxRetries: 0 },
    )
    let release!: () => void
    const started = new Promise<void>((resolve) => {
      release = resolve
    })
    const slow = broker.actor(
      'slow',
      async (ctx: ActorContext) => {
        release()
        await new Promise((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)),
        )
      },
      { queue },
    )
    await broker.enqueueMany([ok.message(), ok.message(), flaky.message(), bad.message()])
    const long = await slow.send()
    const worker = broker.worker({ queues: [queue], concurrency: 3, pollIntervalMs: 50 })
    await worker.start()
    await started
    expect((await values(registry, queue)).get('iddqueue_worker_capacity')).toBe(3)
    await broker.cancel(long.id)
    await broker.join({ queues: [queue], timeoutMs: 20_000 })
    await until(
      async () =>
        (await values(registry, queue)).get('iddqueue_worker_messages_running{actor=slow}') === 0,
    )
    await worker.stop()

    const v = await values(registry, queue)
    expect(v.get('iddqueue_worker_messages_enqueued_total{actor=ok}')).toBe(2)
    expect(v.get('iddqueue_worker_messages_enqueued_total{actor=slow}')).toBe(1)
    expect(v.get('iddqueue_worker_messages_done_total{actor=ok}')).toBe(2)
    expect(v.get('iddqueue_worker_messages_done_total{actor=flaky}')).toBe(1)
    expect(v.get('iddqueue_worker_messages_retried_total{actor=flaky}')).toBe(1)
    expect(v.get('iddqueue_worker_messages_failed_total{actor=flaky}')).toBe(1)
    expect(v.get('iddqueue_worker_messages_failed_total{actor=bad}')).toBe(1)
    expect(v.get('iddqueue_worker_messages_rejected_total{actor=bad}')).toBe(1)
    expect(v.get('iddqueue_worker_messages_rejected_total{actor=flaky}') ?? 0).toBe(0)
    expect(v.get('iddqueue_worker_messages_cancelled_total{actor=slow}')).toBe(1)
    for (const actor of ['ok', 'flaky', 'bad', 'slow'])
      expect(v.get(`iddqueue_worker_messages_running{actor=${actor}}`)).toBe(0)
    // 2 ok + 2 flaky + 1 bad + 1 slow runs, each timed and each waited for
    expect(v.get('iddqueue_worker_handler_duration_seconds_count{actor=ok}')).toBe(2)
    expect(v.get('iddqueue_worker_handler_duration_seconds_count{actor=flaky}')).toBe(2)
    expect(v.get('iddqueue_worker_queue_wait_seconds_count{actor=slow}')).toBe(1)
    expect(v.get('iddqueue_worker_queue_wait_seconds_bucket{le=3600,actor=ok}')).toBe(2)
    expect(v.get('iddqueue_worker_claim_batch_size_count')).toBeGreaterThan(0)
    expect(v.get('iddqueue_worker_claim_batch_size_sum')).toBeGreaterThanOrEqual(6)
    expect(v.get('iddqueue_worker_claim_duration_seconds_count')).toBeGreaterThan(0)
    expect(v.get('iddqueue_worker_capacity')).toBe(0)
    // Labels are queue and actor only (plus le on buckets).
    for (const metric of await registry.getMetricsAsJSON())
      for (const value of metric.values)
        for (const label of Object.keys(value.labels))
          expect(['queue', 'actor', 'le']).toContain(label)
  })

  it('counts messages requeued by crash recovery, with a prefix', async () => {
    const registry = new Registry()
    const broker = db.broker({ plugins: [workerMetrics({ registry, prefix: 'app_' })] })
    const queue = uniqueQueue('rec')
    await broker.ready()
    const dead = crypto.randomUUID()
    await db.sql`insert into iddqueue.workers (id, host, pid, queues, concurrency, heartbeat_at)
      values (${dead}, 'gone', 1, ${[queue]}, 1, now() - interval '1 hour')`
    await db.sql`insert into iddqueue.messages (id, queue, actor, state, worker_id)
      select gen_random_uuid(), ${queue}, 'lost', 'consumed', ${dead}::uuid from generate_series(1, 3)`
    expect(await broker.recover({ staleAfterMs: 60_000 })).toBe(3)
    const v = await values(registry, queue)
    expect(v.get('app_messages_recovered_total')).toBe(3)
  })

  it('refuses a bad prefix', () => {
    expect(() => workerMetrics({ registry: new Registry(), prefix: '1bad-' })).toThrow(
      InvalidOptionError,
    )
  })

  // JSON.stringify throws on a bigint and a property read on null: the
  // refusal must still be InvalidOptionError, naming the value.
  it.each([
    [
      { prefix: 1n },
      'Invalid prefix 1n: expected letters, digits, _ and :, not starting with a digit',
    ],
    [
      { prefix: Object.create(null) },
      'Invalid prefix an object: expected letters, digits, _ and :, not starting with a digit',
    ],
    [null, 'Invalid workerMetrics() options null: expected an object'],
  ])('names any value: %o', (options, text) => {
    expect(() => workerMetrics(options as never)).toThrow(
      expect.objectContaining({ name: 'InvalidOptionError', message: text }),
    )
  })
})
