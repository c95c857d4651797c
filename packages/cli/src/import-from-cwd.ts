import { existsSync, readFileSync } from 'node:fs'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { UsageError } from './usage-error.js'

/**
 * @internal Imports `name` as the application in `cwd` would: a path
 * (relative to `cwd`) or a package found in `node_modules` from `cwd` up.
 * Errors are usage errors starting with `what` (the option or operand).
 */
export async function importFromCwd(
  name: string,
  cwd: string,
  what: string,
): Promise<Record<string, unknown>> {
  const entry = resolveEntry(name, cwd, what)
  try {
    return (await import(pathToFileURL(entry).href)) as Record<string, unknown>
  } catch (error) {
    throw new UsageError(
      `${what}: could not load ${name} (${entry}): ${(error as Error).message}`,
      {
        cause: error,
      },
    )
  }
}

/** The file `import(name)` would load from `cwd`: a path, or a package's ESM entry. */
function resolveEntry(name: string, cwd: string, what: string): string {
  if (name.startsWith('.') || isAbsolute(name)) {
    const path = resolve(cwd, name)
    if (!existsSync(path)) throw new UsageError(`${what}: no file ${path}`)
    return path
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name)
    if (existsSync(join(root, 'package.json'))) return join(root, packageEntry(root))
    if (dirname(dir) === dir) break
  }
  // `dist/jobs.js` is a package name to import(); the user most likely meant the file.
  const file = resolve(cwd, name)
  if (existsSync(file)) {
    throw new UsageError(
      `${what}: cannot find package ${name} from ${resolve(cwd)}; for the file ${file}, write ./${name}`,
    )
  }
  throw new UsageError(`${what}: cannot find package ${name} from ${resolve(cwd)}; install it`)
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
