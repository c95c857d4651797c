import { describe, expect, it } from 'vitest'
import type { LogFields, Logger } from '../src/index.js'
import { setupDatabase } from './helpers.js'

const db = setupDatabase()

/** A logger that keeps every line, by level. */
function recordingLogger() {
  const lines: { level: string; message: string; fields: LogFields | undefined }[] = []
  const at =
    (level: string) =>
    (message: string, fields?: LogFields): void => {
      lines.push({ level, message, fields })
    }
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
  }
  return { logger, lines }
}

const queueName = () => `log_${crypto.randomUUID().slice(0, 8)}`

describe('worker logging', () => {
  it('frees the slot and settles when the logger itself throws', async () => {
    const throwing = () => {
      throw new Error('logger down')
    }
    const broker = db.broker({
      logger: { debug() {}, info() {}, warn: throwing, error: throwing },
    })
    const queue = queueName()
    const fails = broker.actor(
      'fails_loudly',
      () => {
        throw new TypeError('boom')
      },
      { queue, maxRetries: 0 },
    )
    const sent = await Promise.all([fails.send(), fails.send()])
    // Concurrency 1: the second message starts only if the first one's slot was freed.
    const worker = broker.worker({ queues: [queue], concurrency: 1 })
    await worker.start()
    await broker.join({ queues: [queue], timeoutMs: 10_000 })
    await worker.stop()
    const rows = await db.sql`select state from iddqueue.messages
      where id = any(${sent.map((m) => m.id)}::uuid[])`
    expect(rows.map((r) => r.state)).toEqual(['rejected', 'rejected'])
  })

  it('warns, naming the actor, message and error, when a message is rejected for good', async () => {
    const { logger, lines } = recordingLogger()
    const broker = db.broker({ logger })
    const queue = queueName()
    const fails = broker.actor(
      'always_fails',
      () => {
        throw new TypeError('boom')
      },
      { queue, maxRetries: 0 },
    )
    const sent = await fails.send()
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    const warned = lines.filter((line) => line.level === 'warn')
    expect(warned).toEqual([
      {
        level: 'warn',
        message: 'message rejected',
        fields: {
          actor: 'always_fails',
          queue,
          message: sent.id,
          attempt: 1,
          error: expect.any(TypeError),
        },
      },
    ])
    expect((warned[0]!.fields!.error as Error).message).toBe('boom')
  })

  it('warns when a message names an actor this process does not declare', async () => {
    const queue = queueName()
    const producer = db.broker()
    const sent = await producer.actor('declared_elsewhere', () => {}, { queue }).send()
    const { logger, lines } = recordingLogger()
    const consumer = db.broker({ logger })
    consumer.actor('something_else', () => {}, { queue })
    const worker = consumer.worker({ queues: [queue] })
    await worker.start()
    await consumer.join({ queues: [queue] })
    await worker.stop()
    const rejected = lines.filter((line) => line.message === 'message rejected')
    expect(rejected).toHaveLength(1)
    expect(rejected[0]).toMatchObject({
      level: 'warn',
      fields: { actor: 'declared_elsewhere', queue, message: sent.id },
    })
    expect((rejected[0]!.fields!.error as Error).name).toBe('UnknownActorError')
  })

  it('keeps a failed attempt that will be retried at debug', async () => {
    const { logger, lines } = recordingLogger()
    const broker = db.broker({ logger })
    const queue = queueName()
    let calls = 0
    const flaky = broker.actor(
      'fails_once',
      () => {
        calls++
        if (calls === 1) throw new RangeError('once')
      },
      { queue, maxRetries: 1, minBackoffMs: 1, maxBackoffMs: 1 },
    )
    await flaky.send()
    const worker = broker.worker({ queues: [queue] })
    await worker.start()
    await broker.join({ queues: [queue] })
    await worker.stop()
    expect(calls).toBe(2)
    expect(lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([])
    expect(lines.map((line) => line.message)).toContain('attempt failed; will retry')
  })
})
