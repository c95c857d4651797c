import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type * as TypeScript from 'typescript'

/**
 * What {@link comparePackageExports} found for one entry of a package's
 * `exports` map: value exports its types declare that its JavaScript lacks
 * (a class or function a user could call, and that fails at run time), and
 * the reverse. Both empty when the two agree.
 *
 * @example
 * const { '.': root }: Record<string, ExportsDifference> = await comparePackageExports(dir)
 * if (root.missingAtRuntime.length > 0) throw new Error(`types promise ${root.missingAtRuntime}`)
 */
export interface ExportsDifference {
  readonly missingAtRuntime: readonly string[]
  readonly missingInTypes: readonly string[]
}

interface ExportTarget {
  readonly types?: string
  readonly import?: string
}

function isTypeOnly(ts: typeof TypeScript, symbol: TypeScript.Symbol): boolean {
  return (symbol.declarations ?? []).some(
    (declaration) =>
      (ts.isExportSpecifier(declaration) &&
        (declaration.isTypeOnly || declaration.parent.parent.isTypeOnly)) ||
      (ts.isExportDeclaration(declaration) && declaration.isTypeOnly),
  )
}

/** The names a `.d.ts` exports as values (classes, functions, constants, enums). */
function valueExports(ts: typeof TypeScript, file: string): string[] {
  const program = ts.createProgram([file], {
    noEmit: true,
    skipLibCheck: true,
    // Only the declarations' export structure matters: no lib, no @types,
    // which would make this take seconds (minutes on a loaded machine).
    noLib: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
  })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(file)
  const module = source && checker.getSymbolAtLocation(source)
  if (!module) throw new Error(`comparePackageExports: cannot read the module of ${file}`)
  return checker
    .getExportsOfModule(module)
    .filter((symbol) => {
      if (isTypeOnly(ts, symbol)) return false
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      return (target.flags & ts.SymbolFlags.Value) !== 0
    })
    .map((symbol) => symbol.name)
}

/**
 * Compares, for every entry of a built package's `exports` map, the value
 * exports its `.d.ts` declares with the keys of the module its `import`
 * condition loads. A test per package keeps published types honest:
 * `export { type Broker }` bundled into `export { Broker }` would let
 * `new Broker()` typecheck and then fail. Needs `typescript` installed.
 *
 * @example
 * import { comparePackageExports } from '@iddqueue/testing'
 *
 * it('publishes types that match the runtime', async () => {
 *   const differences = await comparePackageExports(new URL('..', import.meta.url))
 *   for (const difference of Object.values(differences)) {
 *     expect(difference).toEqual({ missingAtRuntime: [], missingInTypes: [] })
 *   }
 * })
 */
export async function comparePackageExports(
  packageDir: string | URL,
): Promise<Record<string, ExportsDifference>> {
  // typescript is CommonJS: its API is the default export of the ES module view.
  const loaded = (await import('typescript')) as unknown as { default?: typeof TypeScript }
  const ts = loaded.default ?? (loaded as unknown as typeof TypeScript)
  const dir = packageDir instanceof URL ? fileURLToPath(packageDir) : packageDir
  const manifest = JSON.parse(readFileSync(resolve(dir, 'package.json'), 'utf8')) as {
    exports?: Record<string, ExportTarget | string>
  }
  const result: Record<string, ExportsDifference> = {}
  for (const [entry, target] of Object.entries(manifest.exports ?? {})) {
    if (typeof target !== 'object' || !target.types || !target.import) continue
    const declared = valueExports(ts, resolve(dir, target.types))
    const runtime = Object.keys(
      (await import(pathToFileURL(resolve(dir, target.import)).href)) as object,
    )
    result[entry] = {
      missingAtRuntime: declared.filter((name) => !runtime.includes(name)).sort(),
      missingInTypes: runtime.filter((name) => !declared.includes(name)).sort(),
    }
  }
  return result
}
