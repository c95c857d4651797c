import type { DrainQueuesOptions, JoinableBroker } from './drain-queues.js'

/**
 * Options of {@link drainWithWorker}.
 *
 * @example
 * const options: DrainWithWorkerOptions = { queues: ['emails'], concurrency: 4, timeoutMs: 20_000 }
 */
export interface DrainWithWorkerOptions extends DrainQueuesOptions {
  /** Handlers the worker runs at once. Default `4`. */
  readonly concurrency?: number | undefined
  /** How often the idle worker looks for messages, in ms. Default `50`. */
  readonly pollIntervalMs?: number | undefined
}

/**
 * A broker that can run a worker: an iddqueue broker satisfies it as is.
 *
 * @example
 * const broker: WorkingBroker = createBroker({ url })
 */
export interface WorkingBroker extends JoinableBroker {
  worker(options: { queues?: readonly string[]; concurrency?: number; pollIntervalMs?: number }): {
    start(): Promise<void>
    stop(): Promise<void>
  }
}

/**
 * Runs a worker on the queues until they hold no queued or consumed message,
 * then stops it, even when the wait fails: a test's whole "process what I
 * sent" in one call.
 *
 * @example
 * await sendReceipt.send('order-1')
 * await drainWithWorker(broker, { queues: ['receipts'] })
 * expect(await sql`select * from receipts`).toHaveLength(1)
 */
export async function drainWithWorker(
  broker: WorkingBroker,
  options: DrainWithWorkerOptions = {},
): Promise<void> {
  const { queues, timeoutMs = 20_000, concurrency = 4, pollIntervalMs = 50 } = options
  const worker = broker.worker({
    ...(queues === undefined ? {} : { queues }),
    concurrency,
    pollIntervalMs,
  })
  await worker.start()
  try {
    await broker.join({ ...(queues === undefined ? {} : { queues }), timeoutMs })
  } finally {
    await worker.stop()
  }
}
