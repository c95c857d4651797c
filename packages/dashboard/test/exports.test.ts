import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'

describe('the published build', () => {
  it('exports at runtime exactly the values its types declare', async () => {
    const types = readFileSync(new URL('../dist/index.d.ts', import.meta.url), 'utf8')
    const list = /export \{([^}]*)\};\s*$/.exec(types)![1]!
    const declared = list
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '' && !name.startsWith('type '))
      .sort()
    const runtime = await import('../dist/index.js')
    expect(Object.keys(runtime).sort()).toEqual(declared)
    expect(declared).toEqual([
      'createDashboard',
      'fastifyDashboard',
      'honoHandler',
      'toNodeHandler',
    ])
  })
})
