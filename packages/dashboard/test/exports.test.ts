import { describePublishedTypes } from '@iddqueue/testing/vitest'

describePublishedTypes(new URL('..', import.meta.url), '@iddqueue/dashboard')
