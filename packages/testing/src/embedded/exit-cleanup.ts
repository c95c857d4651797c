// Postmaster pids of the embedded servers this process started and has not
// stopped yet.
const running = new Set<number>()
const signals = ['SIGINT', 'SIGTERM'] as const

/**
 * Makes sure the embedded server with postmaster `pid` is told to shut down
 * when this process exits or gets SIGINT or SIGTERM without `stop()` having
 * run. Returns the function that forgets it again, for `stop()`.
 *
 * The handlers only send SIGQUIT (immediate shutdown): an `exit` handler
 * cannot wait, and the watchdog process removes the data directory once the
 * postmaster is gone. After a signal, when no other listener handles it, the
 * signal is raised again so the process still dies of it.
 *
 * @internal
 */
export function shutDownOnExit(pid: number): () => void {
  if (running.size === 0) {
    process.on('exit', onExit)
    for (const signal of signals) process.on(signal, onSignal)
  }
  running.add(pid)
  return () => {
    running.delete(pid)
    if (running.size === 0) {
      process.removeListener('exit', onExit)
      for (const signal of signals) process.removeListener(signal, onSignal)
    }
  }
}

function onExit(): void {
  for (const pid of running) {
    try {
      process.kill(pid, 'SIGQUIT')
    } catch {
      // Already gone.
    }
  }
  running.clear()
}

function onSignal(signal: NodeJS.Signals): void {
  onExit()
  process.removeListener('exit', onExit)
  for (const name of signals) process.removeListener(name, onSignal)
  // Our listener replaced Node's default action (exit); if nobody else
  // listens, restore it and deliver the signal again.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
}
