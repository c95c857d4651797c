import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** What the fake API saw, for the example's checks. */
export interface ApiStats {
  /** The most requests one customer had in flight at once. */
  maxInFlight: number
  /** 429 answers sent. */
  tooMany: number
  /** 200 answers sent. */
  ok: number
}

/**
 * A fake external API on a random local port. It answers each request after
 * a few ms; the first request of each customer gets a 429 with
 * `Retry-After: 0.2` (seconds), as a busy provider would.
 */
export async function startFakeApi(): Promise<{ url: string; stats: ApiStats; server: Server }> {
  const stats: ApiStats = { maxInFlight: 0, tooMany: 0, ok: 0 }
  const inFlight = new Map<string, number>()
  const seen = new Set<string>()
  const server = createServer((request, response) => {
    const customer = new URL(request.url ?? '/', 'http://x').searchParams.get('customer') ?? ''
    if (!seen.has(customer)) {
      seen.add(customer)
      stats.tooMany++
      response.writeHead(429, { 'retry-after': '0.2' }).end()
      return
    }
    const n = (inFlight.get(customer) ?? 0) + 1
    inFlight.set(customer, n)
    stats.maxInFlight = Math.max(stats.maxInFlight, n)
    setTimeout(() => {
      inFlight.set(customer, (inFlight.get(customer) ?? 1) - 1)
      stats.ok++
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    }, 5)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, stats, server }
}
