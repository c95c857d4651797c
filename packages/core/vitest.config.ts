import { defineConfig } from 'vitest/config'

// Two projects: the ordinary tests, and the chaos suite (test/chaos), which
// kills processes and restarts PostgreSQLs it owns; its files run one at a
// time with generous timeouts. `vitest run --project chaos` runs only it.
export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'core',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['test/chaos/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          testTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
})
