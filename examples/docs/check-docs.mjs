// Type-checks every ```ts example of docs/ and the READMEs with the settings
// `tsc --init` gives a new project (strict, exactOptionalPropertyTypes), so
// an example a newcomer copies compiles in their project too.
//
// Examples are fragments: they use names defined in the surrounding prose
// (`broker`, `mailer`, `id`). A name that is not found is not an error here
// (it types as any; see isContext); every other diagnostic is. Each block is
// its own module. Run by `pnpm typecheck` (turbo builds the packages first).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..')
const out = join(here, '.blocks')

const sources = [
  join(root, 'README.md'),
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(root, 'docs', name)),
  ...readdirSync(join(root, 'packages')).map((name) => join(root, 'packages', name, 'README.md')),
]

/**
 * What a fragment may lean on without defining it: names not found (TS2304,
 * TS2552, TS18004), parameters left untyped because their context is such a
 * name (TS7006, TS7031), and modules of the reader's project or not installed
 * here (TS2307 for `./audit-log-plugin.js`, `pino`). A missing `@iddqueue/*`
 * module or export is always a problem.
 */
function isContext(diagnostic) {
  if ([2304, 2552, 18004, 7006, 7031].includes(diagnostic.code)) return true
  if (diagnostic.code !== 2307) return false
  const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
  return !/Cannot find module '@iddqueue\//.test(text)
}

rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })
const blocks = new Map()
for (const source of sources) {
  let text
  try {
    text = readFileSync(source, 'utf8')
  } catch {
    continue
  }
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[i])) continue
    const start = i + 1
    let end = start
    while (end < lines.length && !lines[end].startsWith('```')) end++
    const file = join(out, `${relative(root, source).replaceAll(/[/.]/g, '_')}_${start + 1}.ts`)
    // `export {}` makes each block a module, so top-level await and names stay its own.
    writeFileSync(file, `${lines.slice(start, end).join('\n')}\nexport {}\n`)
    blocks.set(file, { source: relative(root, source), line: start + 1 })
    i = end
  }
}

const program = ts.createProgram([...blocks.keys()], {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2024.d.ts'],
  types: ['node'],
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: false,
  skipLibCheck: true,
  noEmit: true,
})
const problems = ts
  .getPreEmitDiagnostics(program)
  .filter((d) => !isContext(d) && d.file && blocks.has(d.file.fileName))
for (const d of problems) {
  const { source, line } = blocks.get(d.file.fileName)
  const at = d.file.getLineAndCharacterOfPosition(d.start ?? 0)
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n  ')
  console.error(`${source}:${line + at.line}: TS${d.code}: ${message}`)
}
console.error(`checked ${blocks.size} examples: ${problems.length} problem(s)`)
process.exitCode = problems.length ? 1 : 0
