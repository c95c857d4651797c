import { readFileSync } from 'node:fs'
import { describePublishedTypes } from '@iddqueue/testing/vitest'
import { describe, expect, it } from 'vitest'

describePublishedTypes(new URL('..', import.meta.url), '@iddqueue/metrics')

describe('the published build', () => {
  it('does not load OpenTelemetry unless tracing() is set up', () => {
    const code = readFileSync(new URL('../dist/index.js', import.meta.url), 'utf8')
    // Only a dynamic import, run by tracing()'s setup.
    expect(code).not.toMatch(/^import .*@opentelemetry/m)
  })
})
