// The two external harnesses of the shared steering repo, run from a writable
// copy: shared/bench/ceiling (PostgreSQL's own drain/insert ceilings) and
// shared/bench/peers (graphile-worker, pg-boss, BullMQ-pg). Both folders are
// read-only where the bench runs, so they are copied to
// $TMPDIR/iddqueue-bench/{ceiling,peers}; their node_modules are kept there
// between runs and reinstalled only when the package-lock changes.
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { BENCH_DIR, connString, createDb, dropDb, onDb } from './common.mjs'

// ../../shared/bench from a checkout beside shared/; one level more from a git worktree in wt/<name>.
const SHARED =
  process.env.BENCH_SHARED_DIR ||
  [
    join(BENCH_DIR, '..', '..', 'shared', 'bench'),
    join(BENCH_DIR, '..', '..', '..', 'shared', 'bench'),
  ].find((d) => existsSync(d)) ||
  join(BENCH_DIR, '..', '..', 'shared', 'bench')
const CACHE = join(tmpdir(), 'iddqueue-bench')
const log = (msg) => process.stderr.write(`[bench] ${msg}\n`)

function makeWritable(path) {
  const st = lstatSync(path)
  if (st.isSymbolicLink()) return
  chmodSync(path, st.mode | 0o200)
  if (st.isDirectory()) for (const e of readdirSync(path)) makeWritable(join(path, e))
}

/** Copies src over dst, leaving dst's node_modules (and results) in place. */
function syncCopy(src, dst) {
  mkdirSync(dst, { recursive: true })
  const skip = new Set(['node_modules', 'results'])
  const walk = (rel) => {
    for (const e of readdirSync(join(src, rel), { withFileTypes: true })) {
      const r = join(rel, e.name)
      if (skip.has(e.name)) continue
      if (e.isDirectory()) {
        mkdirSync(join(dst, r), { recursive: true })
        walk(r)
        continue
      }
      if (existsSync(join(dst, r))) rmSync(join(dst, r), { force: true })
      cpSync(join(src, r), join(dst, r))
    }
  }
  walk('')
  makeWritable(dst)
}

const hashOf = (file) =>
  existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : 'none'

/** `npm install` in dir (optionally --prefix sub) unless an install of the same lock is already there. */
function npmInstall(dir, sub = '') {
  const pkgDir = join(dir, sub)
  const stamp = join(pkgDir, 'node_modules', '.bench-installed')
  const want = hashOf(join(pkgDir, 'package-lock.json')) + hashOf(join(pkgDir, 'package.json'))
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === want) return { ok: true, cached: true }
  const args = sub ? ['--prefix', sub, 'install'] : ['install']
  log(`npm ${args.join(' ')} in ${dir}`)
  const r = spawnSync('npm', [...args, '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit'],
    timeout: 600_000,
  })
  if (r.status !== 0)
    return { ok: false, why: `npm ${args.join(' ')} exited ${r.status ?? r.signal ?? r.error}` }
  writeFileSync(stamp, want)
  return { ok: true, cached: false }
}

/** The JSON objects printed on a stream's text (one per line) that match `pred`, in order. */
export const jsonLines = (text, pred = () => true) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l)
      } catch {
        return null
      }
    })
    .filter((o) => o && pred(o))

function runNode(args, { cwd, env, timeoutMs = 600_000, quietTables = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', quietTables ? 'pipe' : 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    if (quietTables) {
      // Forward progress and warnings, not the per-invocation median table (ours comes at the end).
      let rest = ''
      child.stderr.on('data', (d) => {
        const lines = (rest + d).split('\n')
        rest = lines.pop()
        for (const l of lines) if (l.trim() && !l.startsWith('|')) process.stderr.write(`  ${l}\n`)
      })
      child.stderr.on('end', () => {
        if (rest.trim() && !rest.startsWith('|')) process.stderr.write(`  ${rest}\n`)
      })
    }
    const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', (e) => log(`spawn failed: ${e}`))
    child.on('close', (code, signal) => {
      clearTimeout(killer)
      resolve({ code, signal, out })
    })
  })
}

// ---- ceilings -----------------------------------------------------------------

export async function prepareCeiling() {
  const src = join(SHARED, 'ceiling')
  if (!existsSync(join(src, 'drain-ceiling.mjs')))
    throw new Error(`ceiling scripts not found in ${src} (set BENCH_SHARED_DIR)`)
  const dir = join(CACHE, 'ceiling')
  syncCopy(src, dir)
  const inst = npmInstall(dir)
  if (!inst.ok) {
    // The scripts need only postgres 3.4.9: reuse the workspace's copy.
    const own = realpathSync(join(BENCH_DIR, 'node_modules', 'postgres'))
    const version = JSON.parse(readFileSync(join(own, 'package.json'), 'utf8')).version
    log(`${inst.why}; linking the workspace's postgres ${version} into ${dir}/node_modules instead`)
    mkdirSync(join(dir, 'node_modules'), { recursive: true })
    rmSync(join(dir, 'node_modules', 'postgres'), { recursive: true, force: true })
    symlinkSync(own, join(dir, 'node_modules', 'postgres'), 'dir')
  }
  return dir
}

export const CEILINGS = [
  // [workload, variant, script, args] — the README's three commands.
  {
    workload: 'drain-ceiling',
    variant: 'update',
    script: 'drain-ceiling.mjs',
    args: ['50000', '500', '2', 'update'],
  },
  {
    workload: 'drain-ceiling',
    variant: 'delete',
    script: 'drain-ceiling.mjs',
    args: ['50000', '500', '2', 'delete'],
  },
  {
    workload: 'insert-ceiling',
    variant: 'default',
    script: 'insert-ceiling.mjs',
    args: ['50000', '1000'],
  },
]

/** Runs one ceiling script in its own fresh database; returns a result line. */
export async function runCeiling(dir, c, run, db) {
  const base = {
    system: 'pg-ceiling',
    version: null,
    variant: c.variant,
    workload: c.workload,
    run,
    node: process.version,
    config: `node ${c.script} ${c.args.join(' ')}`,
  }
  try {
    await createDb(db)
    await onDb(db, async (c) => {
      base.version = `pg ${(await c`show server_version`)[0].server_version.split(' ')[0]}`
    })
    const r = await runNode([join(dir, c.script), ...c.args], {
      cwd: dir,
      env: { DATABASE_URL: connString(db) },
      timeoutMs: 300_000,
    })
    const line = jsonLines(r.out).at(-1)
    if (!line)
      return { ...base, error: `${c.script} exited ${r.code ?? r.signal} without a result` }
    return {
      ...base,
      ...line,
      workload: c.workload,
      ...(r.code ? { error: `exit ${r.code}` } : {}),
    }
  } catch (e) {
    return { ...base, error: String(e?.message ?? e) }
  } finally {
    try {
      await dropDb(db)
    } catch {
      /* gone */
    }
  }
}

// ---- peers --------------------------------------------------------------------

export const PEERS_NODE20 = ['graphile-worker', 'pg-boss', 'bullmq-pg']
export const PEERS_NODE24 = ['graphile-worker@0.18', 'pg-boss@12']

/** Copies and installs the peers' harness; returns { dir, systems, notes }. */
export async function preparePeers(requested) {
  const src = join(SHARED, 'peers')
  if (!existsSync(join(src, 'run.mjs')))
    throw new Error(`peers harness not found in ${src} (set BENCH_SHARED_DIR)`)
  const dir = join(CACHE, 'peers')
  syncCopy(src, dir)
  const notes = []
  const base = npmInstall(dir)
  if (!base.ok)
    throw new Error(`cannot install the peers (${base.why}); is the npm registry reachable?`)
  const wantLatest = requested ? requested.some((s) => PEERS_NODE24.includes(s)) : true
  if (wantLatest) {
    const latest = npmInstall(dir, 'latest')
    if (!latest.ok)
      notes.push(`${latest.why}: Node 24 systems (${PEERS_NODE24.join(', ')}) skipped`)
  }
  const { missing } = await import(pathToFileURL(join(dir, 'lib', 'systems.mjs')).href)
  const candidates = requested ?? [...PEERS_NODE20, ...PEERS_NODE24]
  const systems = []
  for (const s of candidates) {
    const why = missing(s)
    if (why) notes.push(`skipped ${why}`)
    else systems.push(s)
  }
  return { dir, systems, notes }
}

/** Runs the peers' run.mjs for one workload and one run; returns its per-run lines. */
export async function runPeers(peers, workload, variant, run, env = {}) {
  const out = join(peers.dir, 'results', `from-iddqueue-bench-${process.pid}.jsonl`)
  mkdirSync(join(peers.dir, 'results'), { recursive: true })
  const r = await runNode(
    [
      join(peers.dir, 'run.mjs'),
      '--system',
      peers.systems.join(','),
      '--workload',
      workload,
      '--variant',
      variant,
      '--runs',
      '1',
      '--out',
      out,
    ],
    { cwd: peers.dir, env, timeoutMs: 3_600_000, quietTables: true },
  )
  const lines = jsonLines(r.out, (o) => o.workload && o.stat !== 'median').map((l) => ({
    ...l,
    run,
  }))
  if (r.code) log(`peers run.mjs exited ${r.code ?? r.signal}`)
  return lines
}
