import { readFileSync } from 'node:fs'
import { comparePackageExports, publishedInternals } from '@iddqueue/testing'
import { describe, expect, it } from 'vitest'

describe('the published build', () => {
  // Reads the built .d.ts with the TypeScript compiler: slow on a loaded machine.
  it('declares exactly the values the runtime exports, for every entry', {
    timeout: 120_000,
  }, async () => {
    const differences = await comparePackageExports(new URL('..', import.meta.url))
    expect(Object.keys(differences).length).toBeGreaterThan(0)
    for (const [entry, difference] of Object.entries(differences)) {
      expect({ entry, ...difference }).toEqual({ entry, missingAtRuntime: [], missingInTypes: [] })
    }
  })

  it('does not load OpenTelemetry unless tracing() is set up', () => {
    const code = readFileSync(new URL('../dist/index.js', import.meta.url), 'utf8')
    // Only a dynamic import, run by tracing()'s setup.
    expect(code).not.toMatch(/^import .*@opentelemetry/m)
  })
})

describe('published types of @iddqueue/metrics', () => {
  it('hold nothing marked @internal (built with stripInternal)', async () => {
    expect(await publishedInternals(new URL('..', import.meta.url))).toEqual([])
  })
})
