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

  /** Runs `callback` after the listen connection comes back from a disconnection. */
  onReconnect(callback: () => void): () => void {
    this.#reconnected.add(callback)
    return () => {
      this.#reconnected.delete(callback)
    }
  }
}
