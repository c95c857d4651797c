// Builds and runs lib/delay-proxy.c, the TCP proxy that adds a fixed one-way
// delay (bench/netlat.mjs). Compiled with the system's gcc on first use into
// $TMPDIR/iddqueue-bench/delay-proxy-<hash of the source>. Every proxy started
// is killed when this process exits or receives SIGINT/SIGTERM/SIGHUP, and the
// proxy also exits by itself when its parent dies (PR_SET_PDEATHSIG).
import { spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SOURCE = fileURLToPath(new URL('./delay-proxy.c', import.meta.url))
const live = new Set()
const CLOCK_TICKS =
  Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100

function killAll() {
  for (const p of live) p.kill('SIGTERM')
  live.clear()
}
process.on('exit', killAll)
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.once(sig, () => {
    killAll()
    process.stderr.write(`[netlat] ${sig}: proxies stopped\n`)
    process.exit(130)
  })

/** Compiles the proxy if this source has not been compiled yet; returns the binary's path. */
export function buildDelayProxy() {
  const src = readFileSync(SOURCE)
  const dir = join(tmpdir(), 'iddqueue-bench')
  const bin = join(
    dir,
    `delay-proxy-${createHash('sha256').update(src).digest('hex').slice(0, 12)}`,
  )
  if (existsSync(bin)) return bin
  mkdirSync(dir, { recursive: true })
  const r = spawnSync('gcc', ['-O2', '-Wall', '-Wextra', '-Werror', '-o', `${bin}.tmp`, SOURCE], {
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  if (r.status !== 0)
    throw new Error(`gcc failed to compile ${SOURCE} (${r.error ?? `exit ${r.status}`})`)
  renameSync(`${bin}.tmp`, bin)
  return bin
}

/**
 * Starts a proxy on 127.0.0.1 (a free port) in front of 127.0.0.1:targetPort,
 * delaying each direction by oneWayUs microseconds. Resolves to { port, stop }.
 *
 * @example
 * const proxy = await startDelayProxy(buildDelayProxy(), 5432, 500) // +1 ms round trip
 * try { process.env.PGPORT = String(proxy.port) } finally { await proxy.stop() }
 */
export function startDelayProxy(bin, targetPort, oneWayUs) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['0', String(targetPort), String(Math.round(oneWayUs))], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    live.add(child)
    const exited = new Promise((r) => child.on('exit', (code, signal) => r(code ?? signal)))
    void exited.then((why) => {
      live.delete(child)
      reject(new Error(`delay proxy exited (${why}) before listening`))
    })
    child.on('error', reject)
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening (\d+)/.exec(out)
      if (m)
        resolve({
          port: Number(m[1]),
          pid: child.pid,
          /** CPU seconds (user + system) the proxy has used so far, from /proc. */
          cpuSeconds: () => {
            const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ')
            return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
          },
          stop: async () => {
            child.kill('SIGTERM')
            await exited
          },
        })
    })
  })
}
