/**
 * The source of the watchdog process, run as `node -e <script> <parentPid> <dataDir>`.
 *
 * Every 500 ms it checks whether its parent is gone: on Linux by its own
 * parent pid in `/proc/self/stat` (reparented when the parent exits, even if
 * nobody reaps the parent), elsewhere by `process.kill(parentPid, 0)`. Then it
 * sends SIGQUIT (immediate shutdown) to the postmaster named on the first line
 * of `<dataDir>/postmaster.pid`, SIGKILL after 3 s, removes the data directory
 * and exits. It also exits once the data directory is gone, i.e. after a clean
 * `stop()`. Plain CommonJS, no dependencies: it must run as is under `node -e`.
 *
 * @internal
 */
export const watchdogScript = `
'use strict'
const fs = require('node:fs')
const path = require('node:path')
const parentPid = Number(process.argv[1])
const dataDir = process.argv[2]

function stat(pid) {
  try {
    const text = fs.readFileSync('/proc/' + pid + '/stat', 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}
function alive(pid) {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return error.code === 'EPERM'
  }
  const fields = stat(pid)
  return fields === undefined || fields[0] !== 'Z'
}
function parentGone() {
  const self = stat(process.pid)
  if (self !== undefined && Number(self[1]) !== parentPid) return true
  return !alive(parentPid)
}
function postmasterPid() {
  try {
    const pid = Number(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\\n')[0])
    if (!Number.isSafeInteger(pid) || pid <= 0) return undefined
    // Never signal a recycled pid: on Linux, check it still runs postgres.
    try {
      if (!fs.readFileSync('/proc/' + pid + '/cmdline', 'utf8').includes('postgres')) return undefined
    } catch {}
    return pid
  } catch {
    return undefined
  }
}
function signal(pid, name) {
  try {
    process.kill(pid, name)
  } catch {}
}
function removeDataDir(attempt) {
  try {
    fs.rmSync(dataDir, { recursive: true, force: true })
  } catch {
    if (attempt < 20) return setTimeout(removeDataDir, 100, attempt + 1)
  }
  process.exit(0)
}
function cleanUp() {
  const pid = postmasterPid()
  if (pid === undefined) return removeDataDir(0)
  signal(pid, 'SIGQUIT')
  const killAt = Date.now() + 3000
  const wait = setInterval(() => {
    if (!alive(pid)) {
      clearInterval(wait)
      removeDataDir(0)
    } else if (Date.now() > killAt) {
      signal(pid, 'SIGKILL')
    }
  }, 50)
}
const poll = setInterval(() => {
  if (!fs.existsSync(dataDir)) process.exit(0)
  if (parentGone()) {
    clearInterval(poll)
    cleanUp()
  }
}, 500)
`
