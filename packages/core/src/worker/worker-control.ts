import { MessageCancelled } from '../errors.js'
import { type ControlMessage, formatControl, onControl, sendControl } from '../ops/control.js'
import { pausedQueues } from '../ops/pause.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import type { ClaimLoop } from './claim-loop.js'
import type { Delivery } from './delivery.js'
import type { RunSlots } from './run-slots.js'

/** How long a cancellation for a message not seen yet (a claim in flight) is remembered. */
const PENDING_CANCEL_MS = 10_000

/** @internal What control asks of the rest of the worker. */
export interface WorkerControlHooks {
  isRunning(): boolean
  release(rows: readonly Delivery[]): void
  reportError(error: unknown, doing: string): void
}

/**
 * @internal The worker's answer to the control channel: pause and resume of
 * its queues (a paused queue's buffered messages go back, none starts),
 * cancellation of running, buffered and not-yet-claimed messages, and on
 * each heartbeat a refresh of both in case a notification was missed.
 */
export class WorkerControl {
  /** Queues paused while this worker runs: their buffered messages go back, none starts. */
  readonly #paused = new Set<string>()
  /** Cancellations that arrived while a claim was in flight, by message id. */
  readonly #pendingCancels = new Map<string, number>()
  #queues: readonly string[] = []
  #queueSet: ReadonlySet<string> = new Set()

  constructor(
    private readonly core: BrokerContext,
    private readonly workerId: string,
    private readonly loop: ClaimLoop,
    private readonly slots: RunSlots,
    private readonly hooks: WorkerControlHooks,
  ) {}

  /** Listens on the control channel and reads which of `queues` are paused now. */
  async subscribe(queues: readonly string[]): Promise<() => Promise<void> | void> {
    this.#queues = queues
    this.#queueSet = new Set(queues)
    const unsubscribe = await onControl(this.core, (message) => this.#onControl(message))
    for (const queue of await pausedQueues(this.core, queues)) this.#paused.add(queue)
    return unsubscribe
  }

  /** Claimed rows that may start: a paused queue's go back, cancelled ones are dropped. */
  screen(rows: Delivery[]): Delivery[] {
    if (this.#paused.size === 0 && this.#pendingCancels.size === 0) return rows
    const now = Date.now()
    for (const [id, until] of this.#pendingCancels) if (until < now) this.#pendingCancels.delete(id)
    const runnable: Delivery[] = []
    const released: Delivery[] = []
    const cancelled: string[] = []
    for (const row of rows) {
      if (this.#pendingCancels.delete(row.id)) cancelled.push(row.id)
      else if (this.#paused.has(row.queue)) released.push(row)
      else runnable.push(row)
    }
    this.hooks.release(released)
    if (cancelled.length > 0) void this.#dropCancelled(cancelled)
    return runnable
  }

  /**
   * On each heartbeat: re-reads which queues are paused and which buffered
   * or running messages were cancelled, in case a notification was missed
   * (or in poll-only mode, where there are none).
   */
  async refresh(): Promise<void> {
    if (!this.hooks.isRunning()) return
    const paused = new Set(await pausedQueues(this.core, this.#queues))
    for (const queue of paused) if (!this.#paused.has(queue)) this.#pauseQueue(queue)
    let resumed = false
    for (const queue of this.#paused) {
      if (!paused.has(queue)) {
        this.#paused.delete(queue)
        resumed = true
      }
    }
    if (resumed) this.loop.wake()
    // Buffered messages, and running ones whose handler was not signalled yet.
    const ids = this.loop.buffer.map((delivery) => delivery.id)
    for (const run of this.slots.values()) if (!run.cancelled) ids.push(run.message.id)
    if (ids.length === 0) return
    const rows = await this.core.executor.query<{ id: string }>(
      this.core.statements.cancelRequested,
      [ids],
    )
    for (const { id } of rows) this.#cancel(id)
  }

  #onControl(message: ControlMessage): void {
    if (!this.hooks.isRunning()) return
    switch (message.kind) {
      case 'pause':
        if (!this.#queueSet.has(message.queue)) return
        this.#pauseQueue(message.queue)
        void sendControl(this.core, {
          kind: 'paused',
          workerId: this.workerId,
          queue: message.queue,
        }).catch((error: unknown) => this.hooks.reportError(error, 'confirm a pause'))
        return
      case 'resume':
        if (this.#paused.delete(message.queue)) this.loop.wake()
        return
      case 'cancel':
        this.#cancel(message.messageId)
        return
      default:
        return
    }
  }

  /** Stops starting messages of `queue` and hands back the buffered ones. */
  #pauseQueue(queue: string): void {
    this.#paused.add(queue)
    this.hooks.release(this.loop.take((delivery) => delivery.queue === queue))
  }

  #cancel(id: string): void {
    const run = this.slots.find(id)
    if (run) {
      run.cancelled = true
      run.abort(new MessageCancelled(`Message ${id} was cancelled while running`))
      void sendControl(this.core, { kind: 'cancelled', messageId: id, running: true }).catch(
        (error: unknown) => this.hooks.reportError(error, 'answer a cancellation'),
      )
      return
    }
    if (this.loop.take((delivery) => delivery.id === id).length > 0) {
      void this.#dropCancelled([id])
    } else if (this.loop.claimsInFlight > 0) {
      this.#pendingCancels.set(id, Date.now() + PENDING_CANCEL_MS)
    }
  }

  /** Marks never-started messages cancelled and answers their cancellers. */
  async #dropCancelled(ids: readonly string[]): Promise<void> {
    const { statements } = this.core
    const answers = ids.map((id) =>
      formatControl({ kind: 'cancelled', messageId: id, running: false }),
    )
    try {
      await this.core.executor.query(statements.dropCancelled, [
        ids,
        this.workerId,
        statements.controlChannel,
        answers,
        statements.resultChannel,
      ])
    } catch (error) {
      // Still consumed: crash recovery or the next heartbeat turns it into cancelled.
      this.hooks.reportError(error, 'drop cancelled messages')
    }
  }
}
