import { once } from 'node:events'
import { createServer, type Socket, connect as tcpConnect } from 'node:net'

/**
 * How `cut()` partitions: `refuse` resets every connection and every new
 * one (a firewall that rejects: statements fail at once); `drop` stops
 * forwarding, both ways, on every connection, and leaves new ones
 * unanswered (a firewall that drops packets: statements hang until their
 * deadline, or until `restore()` delivers what was held back).
 */
export type CutMode = 'refuse' | 'drop'

/**
 * A TCP proxy in front of PostgreSQL that a chaos test owns, to partition
 * one client from the server while others still reach it.
 */
export interface TcpProxy {
  /** `target` with this proxy's host and port in place of the server's. */
  readonly url: string
  /** Connections accepted since the proxy opened, refused ones included. */
  readonly accepted: number
  /** The mode of the cut in force, or undefined. */
  readonly cutMode: CutMode | undefined
  /**
   * Partitions the clients from the server (default `refuse`, which resets
   * both ends of every connection: the server's sessions end, releasing
   * their locks).
   */
  cut(mode?: CutMode): void
  /** Ends the partition: new connections go through; after `drop`, forwarding resumes. */
  restore(): void
  close(): Promise<void>
}

interface Pair {
  readonly client: Socket
  readonly server: Socket
}

/** Opens a proxy on 127.0.0.1 (a free port) to the host and port of the URL `target`. */
export async function tcpProxy(target: string): Promise<TcpProxy> {
  const upstream = new URL(target)
  const host = upstream.hostname
  const port = Number(upstream.port || 5432)
  const pairs = new Set<Pair>()
  /** Clients accepted during a `drop` cut, connected on restore. */
  const waiting = new Set<Socket>()
  let cut: CutMode | undefined
  let accepted = 0

  const forward = (client: Socket) => {
    const pair: Pair = { client, server: tcpConnect({ host, port }) }
    pairs.add(pair)
    // Either end closing or failing closes the other: no half-open pairs.
    const end = () => {
      pair.client.destroy()
      pair.server.destroy()
      pairs.delete(pair)
    }
    for (const socket of [pair.client, pair.server]) {
      socket.on('error', end)
      socket.on('close', end)
    }
    pair.client.pipe(pair.server)
    pair.server.pipe(pair.client)
  }

  const proxy = createServer((client) => {
    accepted++
    client.on('error', () => {})
    if (cut === 'refuse') {
      client.resetAndDestroy()
    } else if (cut === 'drop') {
      client.pause()
      client.on('close', () => waiting.delete(client))
      waiting.add(client)
    } else {
      forward(client)
    }
  })
  proxy.listen(0, '127.0.0.1')
  await once(proxy, 'listening')
  const address = proxy.address()
  if (address === null || typeof address === 'string') throw new Error('tcpProxy: no TCP address')
  const proxied = new URL(target)
  proxied.hostname = '127.0.0.1'
  proxied.port = String(address.port)

  const destroyAll = () => {
    for (const { client, server } of pairs) {
      client.resetAndDestroy()
      server.destroy()
    }
    pairs.clear()
    for (const client of waiting) client.destroy()
    waiting.clear()
  }

  return {
    url: proxied.toString(),
    get accepted() {
      return accepted
    },
    get cutMode() {
      return cut
    },
    cut(mode = 'refuse') {
      cut = mode
      if (mode === 'refuse') {
        destroyAll()
        return
      }
      // Bytes not read stay in the kernel's buffers, as unacknowledged
      // packets do, and arrive on restore.
      for (const { client, server } of pairs) {
        client.unpipe(server)
        server.unpipe(client)
        client.pause()
        server.pause()
      }
    },
    restore() {
      const was = cut
      cut = undefined
      if (was !== 'drop') return
      for (const { client, server } of pairs) {
        client.pipe(server)
        server.pipe(client)
      }
      for (const client of waiting) forward(client)
      waiting.clear()
    },
    async close() {
      cut = 'refuse'
      destroyAll()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
    },
  }
}
