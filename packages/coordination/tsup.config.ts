import { defineConfig } from 'tsup'

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  // Declarations marked @internal stay out of the published types.
  dts: { compilerOptions: { stripInternal: true } },
  sourcemap: true,
  clean: true,
  target: 'node20',
})
