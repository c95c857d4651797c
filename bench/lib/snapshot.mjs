// A private copy of the built @iddqueue/core and @iddqueue/schema for one
// bench invocation. Other people rebuild packages/* while a long run goes on
// (tsup empties dist/ first), which would change or break what is measured
// half-way. The copy is taken once, checked to load, and every child imports
// it (IDDQUEUE_BENCH_CORE); it is deleted at the end.
//
// Layout: <dir>/node_modules/@iddqueue/{core,schema}/{package.json,dist}, plus
// symlinks to the installed third-party packages the two depend on (postgres,
// kysely, ...), so Node resolves everything from the copy.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BENCH_DIR } from './common.mjs'

const PACKAGES = {
  core: join(BENCH_DIR, '..', 'packages', 'core'),
  schema: join(BENCH_DIR, '..', 'packages', 'schema'),
}
const sleepSync = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)

function copyOnce(dir) {
  rmSync(dir, { recursive: true, force: true })
  const nm = join(dir, 'node_modules')
  mkdirSync(join(nm, '@iddqueue'), { recursive: true })
  for (const [name, src] of Object.entries(PACKAGES)) {
    const dst = join(nm, '@iddqueue', name)
    mkdirSync(dst, { recursive: true })
    cpSync(join(src, 'package.json'), join(dst, 'package.json'))
    cpSync(join(src, 'dist'), join(dst, 'dist'), { recursive: true })
    // Third-party dependencies: link to the installed copies (first one wins).
    const deps = join(src, 'node_modules')
    if (!existsSync(deps)) continue
    const names = []
    for (const e of readdirSync(deps)) {
      if (e.startsWith('.') || e === '@iddqueue') continue
      if (e.startsWith('@')) for (const s of readdirSync(join(deps, e))) names.push(`${e}/${s}`)
      else names.push(e)
    }
    for (const n of names) {
      const link = join(nm, n)
      if (existsSync(link)) continue
      mkdirSync(join(link, '..'), { recursive: true })
      symlinkSync(realpathSync(join(deps, n)), link, 'dir')
    }
  }
  return join(nm, '@iddqueue', 'core', 'dist', 'index.js')
}

/** Copies and checks the build; retries while it does not load (a rebuild in progress). */
export function snapshotCore({ attempts = 6, waitMs = 5_000, log = () => {} } = {}) {
  const dir = join(tmpdir(), 'iddqueue-bench', `core-${process.pid}`)
  let lastError = ''
  for (let i = 1; i <= attempts; i++) {
    try {
      const entry = copyOnce(dir)
      const check = spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const m = await import(${JSON.stringify(pathToFileURL(entry).href)}); if (typeof m.createBroker !== 'function') throw new Error('no createBroker export');`,
        ],
        { encoding: 'utf8', timeout: 30_000 },
      )
      if (check.status === 0) {
        // Short hash of the two bundles: tells apart builds of the same dirty commit.
        const h = createHash('sha256')
        for (const n of ['core', 'schema'])
          h.update(readFileSync(join(dir, 'node_modules', '@iddqueue', n, 'dist', 'index.js')))
        return { dir, entry, build: h.digest('hex').slice(0, 10) }
      }
      lastError =
        (check.stderr || '')
          .split('\n')
          .filter((l) => /Error|error/.test(l))
          .slice(0, 2)
          .join(' ')
          .trim() || `exit ${check.status}`
    } catch (e) {
      lastError = String(e?.message ?? e)
    }
    if (i < attempts) {
      log(
        `built @iddqueue/core does not load (${lastError}); packages/* being rebuilt? retrying in ${waitMs / 1000} s (${i}/${attempts})`,
      )
      sleepSync(waitMs)
    }
  }
  rmSync(dir, { recursive: true, force: true })
  throw new Error(
    `the built @iddqueue/core does not load: ${lastError}. Rebuild with \`pnpm turbo run build --filter=@iddqueue/core...\` and check packages/core and packages/schema agree.`,
  )
}

export const dropSnapshot = (dir) => rmSync(dir, { recursive: true, force: true })
