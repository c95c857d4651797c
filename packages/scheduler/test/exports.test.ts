import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { publishedInternals } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'

const dist = (file: string) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url))

describe('the published package', () => {
  it('exports at run time exactly the values its .d.ts declares', async () => {
    const declarations = readFileSync(dist('index.d.ts'), 'utf8')
    const list = /export \{([^}]*)\};?\s*$/.exec(declarations)?.[1]
    expect(list).toBeDefined()
    const declared = list!
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '' && !name.startsWith('type '))
      .sort()
    const runtime = Object.keys(await import(dist('index.js'))).sort()
    expect(runtime).toEqual(declared)
  })
})

describe('published types of @iddqueue/scheduler', () => {
  it('hold nothing marked @internal (built with stripInternal)', async () => {
    expect(await publishedInternals(new URL('..', import.meta.url))).toEqual([])
  })
})
