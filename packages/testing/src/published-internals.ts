import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const TAG = '@internal'

/**
 * The declaration files of a built package (`dist/*.d.ts`) that still hold
 * a declaration tagged internal in its TSDoc: empty when its types were built with
 * `stripInternal` and nothing internal leaked. Throws when `dist/` holds no
 * declaration file (the package is not built).
 *
 * @example
 * // test/exports.test.ts of a package built with tsup's dts: { compilerOptions: { stripInternal: true } }
 * expect(await publishedInternals(new URL('..', import.meta.url))).toEqual([])
 */
export async function publishedInternals(packageDir: string | URL): Promise<string[]> {
  const dist = join(typeof packageDir === 'string' ? packageDir : fileURLToPath(packageDir), 'dist')
  const declarations = (await readdir(dist)).filter((file) => file.endsWith('.d.ts')).sort()
  if (declarations.length === 0) {
    throw new Error(`publishedInternals: no .d.ts in ${dist}; build the package first`)
  }
  const found: string[] = []
  for (const file of declarations) {
    if ((await readFile(join(dist, file), 'utf8')).includes(TAG)) found.push(file)
  }
  return found
}
