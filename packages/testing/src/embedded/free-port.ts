import { createServer } from 'node:net'

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: the kernel picks it for
 * a listener on port 0, which is closed again at once.
 *
 * @internal
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port)
        else reject(new Error(`unexpected listener address ${String(address)}`))
      })
    })
  })
}
