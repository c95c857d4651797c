/**
 * Where the CLI writes: stdout for results (JSON, SQL or a report), stderr
 * for people (progress, warnings, errors). Tests pass their own to capture
 * both.
 *
 * @example
 * let stdout = ''
 * const io: CliIo = { out: (text) => { stdout += text }, err: () => {}, env: process.env }
 * await main(['stats', '--json'], io)
 */
export interface CliIo {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  readonly env: Readonly<Record<string, string | undefined>>
  /** Where `--plugins` packages are looked up from. Default `process.cwd()`. */
  readonly cwd?: string
}

/**
 * The process's own streams and environment, the default of `main`.
 *
 * @example
 * process.exitCode = await main(process.argv.slice(2), processIo)
 */
export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
}

/**
 * The CLI's exit codes.
 *
 * - `ok` (0): success.
 * - `failed` (1): the operation failed (PostgreSQL unreachable, tables
 *   missing, any other error), or `check` found drift.
 * - `usage` (2): bad usage: unknown command or option, a missing or invalid
 *   argument, no database URL. Nothing was changed.
 * - `notFound` (3): no message has that id.
 * - `wrongState` (4): the message exists but is not in a state the command
 *   acts on (`retry` or `failed show` of a message that is not rejected).
 *   Nothing was changed.
 * - `busy` (5): a worker still holds the message (`retry` while the
 *   rejection is being recorded): try again shortly.
 * - `crashLoop` (6): `worker --processes`: the worker processes kept
 *   crashing (more than `--max-restarts` exits within a minute); all were
 *   stopped.
 *
 * @example
 * const code = await main(['retry', id])
 * if (code === EXIT.busy) setTimeout(() => void main(['retry', id]), 1_000)
 */
export const EXIT = Object.freeze({
  ok: 0,
  failed: 1,
  usage: 2,
  notFound: 3,
  wrongState: 4,
  busy: 5,
  crashLoop: 6,
} as const)

/** @internal Writes one JSON document, compact, on a line of its own. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(`${JSON.stringify(value)}\n`)
}
