import { type ChildProcess, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { BrokerEvents } from '../../../src/index.js'

const script = fileURLToPath(new URL('../../fixtures/chaos-worker.mjs', import.meta.url))

/** What a chaos worker process reports over IPC. */
export type WorkerReport =
  | { readonly ready: string }
  | { readonly started: number }
  | { readonly finished: number }
  | { readonly refused: readonly RefusedReport[] }
  | { readonly log: string; readonly level: string }
  | { readonly rss: number }
  | { readonly retained: RetainedMemory }

/** One outcome of a `messages:refused` event of the worker: message id and outcome kind. */
export type RefusedReport = Pick<
  BrokerEvents['messages:refused']['messages'][number],
  'id' | 'outcome'
>

/** Memory left after a forced full collection, in bytes (`process.memoryUsage()`'s fields). */
export interface RetainedMemory {
  readonly heapUsed: number
  readonly external: number
  readonly arrayBuffers: number
}

/**
 * A worker in its own process (test/fixtures/chaos-worker.mjs), consuming
 * `queue` with actor `work(i)`, which fails when `i % failEvery === 0`.
 * Tracks what it started and finished, so a test can tell which messages a
 * killed worker held.
 */
export class WorkerProcess {
  readonly child: ChildProcess
  id = ''
  readonly started = new Set<number>()
  readonly finished = new Set<number>()
  /** Every outcome its `messages:refused` events named, in order. */
  readonly refused: RefusedReport[] = []
  readonly logs: { level: string; text: string }[] = []
  /** Resident set size samples, one a second, in bytes. */
  readonly rss: number[] = []
  /** With `exposeGc`: the memory left after a forced full collection, one sample a second. */
  readonly retained: RetainedMemory[] = []
  readonly exited: Promise<number | null>
  #exited = false

  constructor(
    url: string,
    queue: string,
    options: {
      concurrency?: number
      failEvery?: number
      staleAfterMs?: number
      handlerMs?: number
      workerOptions?: Record<string, unknown>
      /** Run it with --expose-gc, so it also reports `retained` memory. */
      exposeGc?: boolean
    } = {},
  ) {
    this.child = fork(
      script,
      [
        url,
        queue,
        String(options.concurrency ?? 8),
        String(options.failEvery ?? 0),
        String(options.staleAfterMs ?? 0),
        String(options.handlerMs ?? 1),
        ...(options.workerOptions ? [JSON.stringify(options.workerOptions)] : []),
      ],
      {
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        ...(options.exposeGc ? { execArgv: [...process.execArgv, '--expose-gc'] } : {}),
      },
    )
    this.child.on('message', (m: WorkerReport) => {
      if ('ready' in m) this.id = m.ready
      else if ('started' in m) this.started.add(m.started)
      else if ('finished' in m) this.finished.add(m.finished)
      else if ('refused' in m) this.refused.push(...m.refused)
      else if ('log' in m) this.logs.push({ level: m.level, text: m.log })
      else if ('rss' in m) this.rss.push(m.rss)
      else if ('retained' in m) this.retained.push(m.retained)
    })
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code) => {
        this.#exited = true
        resolve(code)
      }),
    )
  }

  get alive(): boolean {
    return !this.#exited
  }

  /** Messages it started and did not finish: the ones a kill may run twice. */
  get inFlight(): number[] {
    return [...this.started].filter((i) => !this.finished.has(i))
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal)
  }

  /** Stops it gracefully (SIGTERM) and waits for the exit code. */
  async stop(): Promise<number | null> {
    if (this.alive) this.child.kill('SIGTERM')
    return this.exited
  }
}
