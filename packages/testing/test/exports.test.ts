import { describe, expect, it } from 'vitest'
import { publishedInternals } from '../src/index.js'
import { describePublishedTypes } from '../src/vitest.js'

describePublishedTypes(new URL('..', import.meta.url), '@iddqueue/testing')

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
