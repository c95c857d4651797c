import { comparePackageExports, publishedInternals } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'

describe('published types', () => {
  // Reads the built .d.ts with the TypeScript compiler: slow on a loaded machine.
  it('declare exactly the values the runtime exports, for every entry', {
    timeout: 120_000,
  }, async () => {
    const differences = await comparePackageExports(new URL('..', import.meta.url))
    expect(Object.keys(differences).length).toBeGreaterThan(0)
    for (const [entry, difference] of Object.entries(differences)) {
      expect({ entry, ...difference }).toEqual({ entry, missingAtRuntime: [], missingInTypes: [] })
    }
  })
})

describe('published types of @iddqueue/coordination', () => {
  it('hold nothing marked @internal (built with stripInternal)', async () => {
    expect(await publishedInternals(new URL('..', import.meta.url))).toEqual([])
  })
})
