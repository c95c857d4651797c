import { existsSync, readFileSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { coreMigrations, type MigrationSet } from '@iddqueue/schema'
import type { OptionSpec } from './command.js'
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
  const entry = resolveEntry(name, cwd)
  let module: { migrationSet?: unknown }
  try {
    module = await import(pathToFileURL(entry).href)
  } catch (error) {
    throw new UsageError(
      `--plugins: could not load ${name} (${entry}): ${(error as Error).message}`,
      { cause: error },
    )
  }
  const set = module.migrationSet as Partial<MigrationSet> | undefined
  if (typeof set?.owner !== 'string' || !Array.isArray(set.migrations)) {
    throw new UsageError(
      `--plugins: ${name} does not export migrationSet ({ owner, migrations }); is it an iddqueue plugin?`,
    )
  }
  return set as MigrationSet
}

/** The file `import(name)` would load from `cwd`: a path, or a package's ESM entry. */
function resolveEntry(name: string, cwd: string): string {
  if (name.startsWith('.') || isAbsolute(name)) {
    const path = resolve(cwd, name)
    if (!existsSync(path)) throw new UsageError(`--plugins: no file ${path}`)
    return path
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name)
    if (existsSync(join(root, 'package.json'))) return join(root, packageEntry(root))
    if (dirname(dir) === dir) break
  }
  throw new UsageError(`--plugins: cannot find package ${name} from ${resolve(cwd)}; install it`)
}

type Exports = string | { readonly [condition: string]: Exports | undefined } | undefined

function packageEntry(root: string): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports?: Exports | { readonly '.'?: Exports }
    module?: string
    main?: string
  }
  const exports = pkg.exports as Exports
  const dot = typeof exports === 'object' && '.' in exports ? exports['.'] : exports
  return conditional(dot) ?? pkg.module ?? pkg.main ?? 'index.js'
}

/** The `import` (else `node`, else `default`) target of an exports entry, through nested conditions. */
function conditional(target: Exports): string | undefined {
  if (typeof target === 'string') return target
  if (target === undefined) return undefined
  return conditional(target.import ?? target.node ?? target.default)
}
