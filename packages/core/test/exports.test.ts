import { describePublishedTypes } from '@iddqueue/testing/vitest'
import { describe, expect, it } from 'vitest'

describePublishedTypes(new URL('..', import.meta.url), '@iddqueue/core')

describe('published types of @iddqueue/core', () => {
  it('name none of the internals (the broker context, the message host, Message.with)', async () => {
    const { readFile } = await import('node:fs/promises')
    const dts = await readFile(new URL('../dist/index.d.ts', import.meta.url), 'utf8')
    for (const name of ['BrokerContext', 'MessageHost', 'EventBus', 'Statements', 'exclusive']) {
      expect(dts).not.toMatch(new RegExp(`\\b${name}\\b`))
    }
  })
})
