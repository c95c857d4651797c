import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts', 'src/vitest.ts'],
  format: ['esm'],
  // Declarations marked @internal stay out of the published types.
  dts: { compilerOptions: { stripInternal: true } },
  sourcemap: true,
  clean: true,
  target: 'node20',
  // Loaded on demand from the user's project by comparePackageExports(), never bundled.
  external: ['typescript'],
})
