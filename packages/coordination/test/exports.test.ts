import { readFileSync } from 'node:fs'
import { expect, it } from 'vitest'

it('the published value exports match the .d.ts', async () => {
  const dist = new URL('../dist/', import.meta.url)
  const runtime = Object.keys(await import(new URL('index.js', dist).href)).sort()
  const dts = readFileSync(new URL('index.d.ts', dist), 'utf8')
  const list = /export \{([^}]*)\};\s*$/.exec(dts)?.[1] ?? ''
  const values = list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && !name.startsWith('type '))
    .sort()
  expect(runtime).toEqual(values)
})
