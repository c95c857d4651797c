import { type ChildProcess, fork } from 'node:child_process'
import { createInterface } from 'node:readline'
import type { CliIo } from '../cli-io.js'
import { EXIT } from '../cli-io.js'
import { RESTART_DEFAULTS, RestartPolicy, type RestartPolicyOptions } from './restart-policy.js'

/** @internal What `superviseWorkers` runs. */
export interface WorkerSupervisorOptions {
  /** How many worker processes. */
  readonly processes: number
  /** The script each child runs (the CLI's own `bin.js`). */
  readonly script: string
  /** The child's arguments: `worker MODULE ...` without `--processes`. */
  readonly args: readonly string[]
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly restart?: Partial<RestartPolicyOptions> | undefined
}

const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const

interface Slot {
  readonly index: number
  child: ChildProcess | undefined
  startedAt: number
  timer: NodeJS.Timeout | undefined
  lastCode: number | null
}

/**
 * @internal Runs `processes` worker processes until SIGTERM or SIGINT, each
 * a `iddqueue worker MODULE` of its own (its own broker, pool and LISTEN
 * connection), and returns the exit code.
 *
 * A child that exits unexpectedly is restarted after a backoff; more than
 * `maxRestarts` crashes within the window is a crash loop: the others are
 * stopped and the code is `EXIT.crashLoop`. A child exiting with the usage
 * code (a module it cannot load, a bad option) stops everything with that
 * code, since a restart cannot fix it. A stop signal is forwarded as SIGTERM
 * to every child, which stops gracefully; a second one kills them. The code
 * is `EXIT.ok` when every child stopped cleanly, `EXIT.failed` otherwise.
 *
 * Children run in their own process group, so a terminal's Ctrl-C reaches
 * them once, through the supervisor, and not twice (a second signal would
 * end a child's graceful stop). If the supervisor dies, each child sees its
 * IPC channel close and stops gracefully on its own.
 */
export function superviseWorkers(options: WorkerSupervisorOptions, io: CliIo): Promise<number> {
  const policy = new RestartPolicy({ ...RESTART_DEFAULTS, ...options.restart })
  const slots: Slot[] = Array.from({ length: options.processes }, (_, index) => ({
    index,
    child: undefined,
    startedAt: 0,
    timer: undefined,
    lastCode: null,
  }))
  let stopping = false
  let verdict: number | undefined

  return new Promise<number>((resolve) => {
    const finishIfDone = () => {
      if (!stopping || slots.some((slot) => slot.child !== undefined)) return
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal)
      const failed = slots.filter((slot) => slot.lastCode !== 0)
      if (verdict === undefined && failed.length > 0) {
        io.err(
          `iddqueue worker: ${failed.length} of ${slots.length} worker processes did not stop cleanly (${failed.map((slot) => `#${slot.index + 1}: ${describeExit(slot.lastCode)}`).join(', ')})\n`,
        )
      }
      resolve(verdict ?? (failed.length > 0 ? EXIT.failed : EXIT.ok))
    }

    const stopAll = (code?: number) => {
      if (verdict === undefined && code !== undefined) verdict = code
      if (stopping) return
      stopping = true
      for (const slot of slots) {
        clearTimeout(slot.timer)
        slot.timer = undefined
        slot.child?.kill('SIGTERM')
      }
      finishIfDone()
    }

    const start = (slot: Slot) => {
      slot.timer = undefined
      slot.startedAt = Date.now()
      const child = fork(options.script, [...options.args], {
        cwd: options.cwd,
        env: { ...options.env, IDDQUEUE_WORKER_PROCESS: String(slot.index + 1) },
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        detached: true,
      })
      slot.child = child
      const prefix = `[worker #${slot.index + 1} pid ${child.pid}] `
      createInterface({ input: child.stdout! }).on('line', (line) => io.out(`${line}\n`))
      createInterface({ input: child.stderr! }).on('line', (line) => io.err(`${prefix}${line}\n`))
      child.on('exit', (code, signal) => {
        slot.child = undefined
        slot.lastCode = code ?? (signal ? 128 : null)
        if (stopping) return finishIfDone()
        const how = describeExit(code, signal)
        if (code === EXIT.usage) {
          io.err(
            `iddqueue worker: worker process #${slot.index + 1} ${how}: a usage error; stopping\n`,
          )
          return stopAll(EXIT.usage)
        }
        const decision = policy.crashed(slot.index, slot.startedAt, Date.now())
        if (decision.action === 'give-up') {
          io.err(
            `iddqueue worker: crash loop: worker processes exited ${decision.crashes} times within ${decision.windowMs / 1000} s (the last, #${slot.index + 1}, ${how}); stopping all (exit ${EXIT.crashLoop})\n`,
          )
          return stopAll(EXIT.crashLoop)
        }
        io.err(
          `iddqueue worker: worker process #${slot.index + 1} ${how}; restarting it in ${decision.delayMs} ms\n`,
        )
        slot.timer = setTimeout(() => start(slot), decision.delayMs)
      })
      // The children stop on their own if the supervisor dies; it need not keep them alive.
      child.channel?.unref()
    }

    let signals = 0
    const onSignal = (signal: NodeJS.Signals) => {
      if (++signals > 1) {
        io.err(`${signal} again: killing the worker processes\n`)
        for (const slot of slots) slot.child?.kill('SIGKILL')
        verdict ??= EXIT.failed
        return
      }
      io.err(`${signal}: stopping ${slots.length} worker processes gracefully\n`)
      stopAll()
    }
    for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
    io.err(
      `iddqueue worker: starting ${slots.length} worker processes; SIGTERM or SIGINT stops them\n`,
    )
    for (const slot of slots) start(slot)
  })
}

function describeExit(code: number | null, signal?: NodeJS.Signals | null): string {
  if (signal) return `was killed by ${signal}`
  return `exited with code ${code}`
}
