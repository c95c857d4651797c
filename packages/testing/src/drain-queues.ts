/**
 * Options of {@link drainQueues}, passed to the broker's `join`.
 *
 * @example
 * const options: DrainQueuesOptions = { queues: ['emails'], timeoutMs: 5_000 }
 */
export interface DrainQueuesOptions {
  /** The queues to wait for. Default: every queue of the broker. */
  readonly queues?: readonly string[] | undefined
  /** How long to wait before the broker's `join` rejects. Default: the broker's. */
  readonly timeoutMs?: number | undefined
}

/**
 * Anything with the `join` method of an iddqueue broker.
 *
 * Declared here, not imported, so this package does not depend on
 * `@iddqueue/core`; an iddqueue broker satisfies it as is.
 *
 * @example
 * const fake: JoinableBroker = { join: async () => {} }
 * await drainQueues(fake)
 */
export interface JoinableBroker {
  /** Resolves once the queues hold no queued or consumed messages. */
  join(options?: DrainQueuesOptions): Promise<void>
}

/**
 * Waits until the broker's queues hold no queued or consumed messages: every
 * message sent so far, and every message those sent in turn, has settled.
 *
 * It is `broker.join(options)`, named for what a test means by it. Run a
 * worker meanwhile, or nothing will ever drain.
 *
 * @example
 * await sendReceipt.send('order-1')
 * await drainQueues(broker, { queues: ['receipts'], timeoutMs: 5_000 })
 * expect(await sql`select * from receipts`).toHaveLength(1)
 */
export function drainQueues(broker: JoinableBroker, options?: DrainQueuesOptions): Promise<void> {
  return broker.join(options)
}
