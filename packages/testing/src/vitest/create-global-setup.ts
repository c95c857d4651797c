import type { TestProject } from 'vitest/node'
import { dropStaleTestDatabases } from '../drop-stale-test-databases.js'
import {
  type PrepareTemplateDatabaseOptions,
  prepareTemplateDatabase,
} from '../prepare-template-database.js'
import { startTestDatabase } from '../start-test-database.js'
import type { StartTestDatabaseOptions } from '../start-test-database-options.js'

/**
 * Options of {@link createGlobalSetup}.
 *
 * Those of `startTestDatabase`, plus an optional template that every test
 * database is cloned from.
 *
 * @example
 * const options: GlobalSetupOptions = {
 *   containerTimeoutMs: 1000,
 *   template: { name: 'myapp_template', setup: (url) => migrate(url) },
 * }
 */
export interface GlobalSetupOptions extends StartTestDatabaseOptions {
  /** Built once per run with `prepareTemplateDatabase`, e.g. to run migrations. Default: none. */
  readonly template?: PrepareTemplateDatabaseOptions | undefined
}

/**
 * A vitest `globalSetup` function: receives the test project, resolves to the teardown.
 *
 * @example
 * const setup: GlobalSetup = createGlobalSetup()
 * export default setup
 */
export type GlobalSetup = (project: Pick<TestProject, 'provide'>) => Promise<() => Promise<void>>

/**
 * Makes the default export of a vitest `globalSetup` file that starts one
 * PostgreSQL server for the whole run.
 *
 * The setup starts the server with `startTestDatabase(options)`, drops test
 * databases left by dead processes (`dropStaleTestDatabases`), builds
 * `options.template` if given, and provides `iddqueueServerUrl` and
 * `iddqueueTemplate` (`''` without a template) to the tests, where
 * {@link useTestDatabase} reads them. The teardown stops the server.
 *
 * @example
 * // test/global-setup.ts, listed in vitest.config.ts as test.globalSetup
 * import { createGlobalSetup } from '@iddqueue/testing/vitest'
 *
 * export default createGlobalSetup({
 *   template: {
 *     name: 'myapp_template',
 *     fingerprint: migrationsHash,
 *     setup: (url) => migrate(url),
 *   },
 * })
 */
export function createGlobalSetup(options: GlobalSetupOptions = {}): GlobalSetup {
  const { template, ...startOptions } = options
  return async (project) => {
    const server = await startTestDatabase(startOptions)
    let templateName = ''
    try {
      await dropStaleTestDatabases(server.url)
      if (template !== undefined) templateName = await prepareTemplateDatabase(server.url, template)
    } catch (error) {
      // vitest does not run the teardown of a setup that threw.
      await server.stop()
      throw error
    }
    project.provide('iddqueueServerUrl', server.url)
    project.provide('iddqueueTemplate', templateName)
    return () => server.stop()
  }
}
