import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // One server for the run: DATABASE_URL if set, else a container, else embedded.
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
