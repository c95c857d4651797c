import { comparePackageExports } from '@iddqueue/testing'
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

describe('published types of @iddqueue/schema', () => {
  it('hold nothing marked @internal (built with stripInternal)', async () => {
    const { readdir, readFile } = await import('node:fs/promises')
    const dist = new URL('../dist/', import.meta.url)
    const declarations = (await readdir(dist)).filter((file) => file.endsWith('.d.ts'))
    expect(declarations.length).toBeGreaterThan(0)
    for (const file of declarations) {
      expect({
        file,
        internal: /@internal/.test(await readFile(new URL(file, dist), 'utf8')),
      }).toEqual({
        file,
        internal: false,
      })
    }
  })
})
