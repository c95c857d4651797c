import { readFileSync } from 'node:fs'

/**
 * True when a process with this pid exists on this host and is not a zombie.
 *
 * `process.kill(pid, 0)` alone is not enough: an exited child that nobody
 * reaped (PID 1 in many containers never does) still answers it. On Linux the
 * state letter in `/proc/<pid>/stat` tells a zombie (`Z`) apart.
 *
 * @internal
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return true
  }
}
