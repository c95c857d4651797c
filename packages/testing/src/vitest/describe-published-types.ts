import { describe, expect, it } from 'vitest'
import { comparePackageExports } from '../compare-package-exports.js'
import { publishedInternals } from '../published-internals.js'

/**
 * Registers the two tests every published package runs on its own build:
 * its `.d.ts` declares exactly the values its runtime exports, for every
 * entry of its exports map ({@link comparePackageExports}), and it holds
 * nothing marked internal ({@link publishedInternals}: the package is built
 * with `stripInternal`). Call it at the top level of a vitest test file.
 *
 * @example
 * // test/exports.test.ts
 * import { describePublishedTypes } from '@iddqueue/testing/vitest'
 *
 * describePublishedTypes(new URL('..', import.meta.url), '@my/package')
 */
export function describePublishedTypes(packageDir: URL, name: string): void {
  describe(`published types of ${name}`, () => {
    // Reads the built .d.ts with the TypeScript compiler: slow on a loaded machine.
    it('declare exactly the values the runtime exports, for every entry', {
      timeout: 120_000,
    }, async () => {
      const differences = await comparePackageExports(packageDir)
      expect(Object.keys(differences).length).toBeGreaterThan(0)
      for (const [entry, difference] of Object.entries(differences)) {
        expect({ entry, ...difference }).toEqual({
          entry,
          missingAtRuntime: [],
          missingInTypes: [],
        })
      }
    })

    it('hold nothing marked @internal (built with stripInternal)', async () => {
      expect(await publishedInternals(packageDir)).toEqual([])
    })
  })
}
