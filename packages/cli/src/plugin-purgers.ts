import type { IddqueuePlugin } from '@iddqueue/core'
import { importFromCwd } from './import-from-cwd.js'
import { UsageError } from './usage-error.js'

/** @internal A plugin whose rows `iddqueue purge` also deletes, and its label in the output. */
export interface PluginPurger {
  /** Its count's key in `--json` output. */
  readonly key: string
  readonly label: string
  readonly plugin: IddqueuePlugin
  purge(batchSize: number | undefined): Promise<number>
}

interface CoordinationLike extends IddqueuePlugin {
  purge(options?: { batchSize?: number }): Promise<number>
}

/**
 * @internal The plugins named by `--plugins` (comma-separated, found as the
 * application would import them) that have rows to purge: today the
 * coordination plugin (`coordination()` with its own timer off), whose
 * `purge()` deletes expired slots, windows, barriers and groups. Other
 * plugin packages are accepted and have nothing to purge here.
 */
export async function pluginPurgers(
  plugins: string | boolean | undefined,
  cwd: string,
): Promise<PluginPurger[]> {
  if (typeof plugins !== 'string') return []
  const names = [...new Set(plugins.split(',').map((name) => name.trim()))]
  if (names.some((name) => name === '')) throw new UsageError('--plugins: empty package name')
  const purgers: PluginPurger[] = []
  for (const name of names) {
    const module = await importFromCwd(name, cwd, '--plugins')
    if (typeof module.coordination !== 'function') continue
    const plugin = (module.coordination as (options: object) => CoordinationLike)({
      purgeIntervalMs: false,
    })
    purgers.push({
      key: 'coordination',
      label: 'coordination row',
      plugin,
      purge: (batchSize) => plugin.purge(batchSize === undefined ? {} : { batchSize }),
    })
  }
  return purgers
}
