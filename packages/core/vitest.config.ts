import { defineConfig } from 'vitest/config'

// Two projects: the ordinary tests, and the chaos suite (test/chaos), which
// kills processes and restarts PostgreSQLs it owns; its files run one at a
// time with generous timeouts. `vitest run --project chaos` runs only it.
// IDDQUEUE_SKIP_CHAOS=1 leaves the chaos suite out (CI runs it once, not in
// every phase).
const skipChaos = process.env.IDDQUEUE_SKIP_CHAOS === '1'

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
      ...(skipChaos
        ? []
        : [
            {
              extends: true as const,
              test: {
                name: 'chaos',
                include: ['test/chaos/**/*.test.ts'],
                testTimeout: 300_000,
                fileParallelism: false,
              },
            },
          ]),
    ],
  },
})
