import { createGlobalSetup } from '@iddqueue/testing/vitest'

export default createGlobalSetup()
