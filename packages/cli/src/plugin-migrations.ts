import { coreMigrations, type MigrationSet } from '@iddqueue/schema'
import type { OptionSpec } from './command.js'
import { importFromCwd } from './import-from-cwd.js'
import { UsageError } from './usage-error.js'

/** @internal The `--plugins` option of the commands that read migrations. */
export const PLUGINS_OPTION: Readonly<Record<string, OptionSpec>> = {
  plugins: { type: 'string', value: 'PACKAGES' },
}

/**
 * @internal Core's migrations, then those of each plugin package named in
 * `plugins` (comma-separated, in order). A package is found the way the
 * application would import it, from `cwd` up through `node_modules`, or
 * given as a path; it must export `migrationSet`, as `@iddqueue/results`
 * does.
 */
export async function migrationSets(
  plugins: string | boolean | undefined,
  cwd: string,
): Promise<MigrationSet[]> {
  if (typeof plugins !== 'string') return [coreMigrations]
  const names = [...new Set(plugins.split(',').map((name) => name.trim()))]
  if (names.some((name) => name === '')) throw new UsageError('--plugins: empty package name')
  const sets = [coreMigrations]
  for (const name of names) sets.push(await loadMigrationSet(name, cwd))
  return sets
}

async function loadMigrationSet(name: string, cwd: string): Promise<MigrationSet> {
  const module = await importFromCwd(name, cwd, '--plugins')
  const set = module.migrationSet as Partial<MigrationSet> | undefined
  if (typeof set?.owner !== 'string' || !Array.isArray(set.migrations)) {
    throw new UsageError(
      `--plugins: ${name} does not export migrationSet ({ owner, migrations }); is it an iddqueue plugin?`,
    )
  }
  return set as MigrationSet
}
