import { describe, expect, it } from 'vitest'
import { comparePackageExports, publishedInternals } from '../src/index.js'

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

describe('published types of @iddqueue/testing', () => {
  it('hold nothing marked @internal (built with stripInternal)', async () => {
    expect(await publishedInternals(new URL('..', import.meta.url))).toEqual([])
  })
})

describe('publishedInternals', () => {
  it('names the declaration files that hold @internal, and refuses an unbuilt package', async () => {
    const { mkdtemp, mkdir, rm, writeFile } = await import('node:fs/promises')
    const { join } = await import('node:path')
    const { tmpdir } = await import('node:os')
    const dir = await mkdtemp(join(tmpdir(), 'iddqueue-internals-'))
    try {
      await mkdir(join(dir, 'dist'))
      await expect(publishedInternals(dir)).rejects.toThrow('no .d.ts')
      await writeFile(join(dir, 'dist', 'index.d.ts'), 'export declare const a: 1\n')
      await writeFile(
        join(dir, 'dist', 'other.d.ts'),
        '/** @internal */\nexport declare const b: 1\n',
      )
      expect(await publishedInternals(dir)).toEqual(['other.d.ts'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
