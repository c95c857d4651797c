// Holds the machine's exclusive load lock (flock -x) for one segment of a
// long benchmark, so that each hold stays short and others' tests run in
// between. `flock` runs a `cat` that keeps the lock until its stdin closes:
// release() closes it, and if this process dies the pipe closes and the lock
// goes with it, so no hold outlives the benchmark.
import { spawn } from 'node:child_process'

export const LOAD_LOCK = process.env.IDDQUEUE_LOAD_LOCK || '/tmp/iddqueue-load.lock'

// A flock still waiting when this process dies would otherwise wait on as an
// orphan (and then take and drop the lock at once): kill ours on the way out.
const waiting = new Set()
process.on('exit', () => {
  for (const child of waiting) child.kill()
})
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(sig, () => process.exit(130))

/**
 * Waits for the exclusive lock at `path`; resolves to release(). With `path`
 * null (`--no-lock`), resolves at once to a no-op.
 *
 * @example
 * const release = await holdLoadLock(LOAD_LOCK)
 * try { await measure() } finally { await release() }
 */
export function holdLoadLock(path) {
  if (!path) return Promise.resolve(async () => {})
  return new Promise((resolve, reject) => {
    const child = spawn('flock', ['-x', path, 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    waiting.add(child)
    const exited = new Promise((r) => child.on('exit', r))
    void exited.then(() => waiting.delete(child))
    child.on('error', reject)
    child.stdout.once('data', () =>
      resolve(async () => {
        child.stdin.end()
        await exited
      }),
    )
    void exited.then((code) => reject(new Error(`flock ${path} exited ${code} before locking`)))
  })
}
