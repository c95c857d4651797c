import type { Logger } from './logger.js'

/** @internal Starts a LISTEN; `onListen` runs on every (re)connection. */
export type ListenFunction = (
  channel: string,
  onNotify: (payload: string) => void,
  onListen: () => void,
) => Promise<{ unlisten(): Promise<void> }>

type Handler = (payload: string) => void

interface Channel {
  readonly handlers: Set<Handler>
  listening: Promise<{ unlisten(): Promise<void> }> | undefined
  connections: number
}

/**
 * @internal The broker's single LISTEN connection, shared by every consumer,
 * result waiter and cancellation watcher of the process. Notifications are
 * hints: after a reconnection, `onReconnect` callbacks rescan the tables,
 * since notifications sent while disconnected are lost.
 */
export class Listener {
  readonly #listen: ListenFunction | undefined
  readonly #channels = new Map<string, Channel>()
  readonly #reconnected = new Set<() => void>()
  /** Notifications this process sent and already delivered to itself, by channel and payload. */
  readonly #echoes = new Map<string, number>()

  constructor(
    listen: ListenFunction | undefined,
    private readonly logger: Logger,
  ) {
    this.#listen = listen
  }

  /** False in poll-only mode: callers must poll instead of waiting for notifications. */
  get available(): boolean {
    return this.#listen !== undefined
  }

  /** Calls `handler` with each payload on `channel` until the returned function is called. */
  async subscribe(channelName: string, handler: Handler): Promise<() => Promise<void>> {
    const listen = this.#listen
    if (!listen) return async () => {}
    let channel = this.#channels.get(channelName)
    if (!channel) {
      const created: Channel = { handlers: new Set(), listening: undefined, connections: 0 }
      created.listening = listen(
        channelName,
        (payload) => {
          if (this.#isEcho(channelName, payload)) return
          for (const h of created.handlers) h(payload)
        },
        () => {
          if (++created.connections > 1) {
            this.logger.info('listen connection re-established; rescanning', {
              channel: channelName,
            })
            for (const callback of this.#reconnected) callback()
          }
        },
      )
      channel = created
      this.#channels.set(channelName, channel)
    }
    channel.handlers.add(handler)
    const current = channel
    try {
      await current.listening
    } catch (error) {
      current.handlers.delete(handler)
      if (current.handlers.size === 0) this.#channels.delete(channelName)
      throw error
    }
    return async () => {
      current.handlers.delete(handler)
      if (current.handlers.size > 0 || this.#channels.get(channelName) !== current) return
      this.#channels.delete(channelName)
      await (await current.listening)?.unlisten().catch(() => {})
    }
  }

  /**
   * Hands `payload` to this process's own subscribers of `channelName` now,
   * as a notification would (a wake-up for a send this process committed).
   * A handler that throws is logged, never thrown to the sender.
   */
  deliver(channelName: string, payload: string): void {
    const channel = this.#channels.get(channelName)
    if (!channel) return
    for (const handler of channel.handlers) {
      try {
        handler(payload)
      } catch (error) {
        this.logger.error('a notification handler failed', { channel: channelName, error })
      }
    }
  }

  /**
   * Says that this process is about to notify `payload` on `channelName`
   * after delivering it to itself with {@link deliver}: when the
   * notification comes back through the LISTEN connection, it is dropped
   * once instead of waking the same subscribers twice. `sent(false)` (the
   * notification failed) forgets it.
   */
  expectEcho(channelName: string, payload: string): (sent: boolean) => void {
    if (!this.#channels.has(channelName)) return () => {}
    const key = `${channelName}\u0000${payload}`
    this.#echoes.set(key, (this.#echoes.get(key) ?? 0) + 1)
    return (sent) => {
      if (!sent) this.#isEcho(channelName, payload)
    }
  }

  #isEcho(channelName: string, payload: string): boolean {
    const key = `${channelName}\u0000${payload}`
    const expected = this.#echoes.get(key)
    if (expected === undefined) return false
    if (expected <= 1) this.#echoes.delete(key)
    else this.#echoes.set(key, expected - 1)
    return true
  }

  /** Runs `callback` after the listen connection comes back from a disconnection. */
  onReconnect(callback: () => void): () => void {
    this.#reconnected.add(callback)
    return () => {
      this.#reconnected.delete(callback)
    }
  }
}
