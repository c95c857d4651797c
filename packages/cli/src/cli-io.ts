/** Where the CLI writes: stdout for results (JSON or SQL), stderr for people. */
export interface CliIo {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  readonly env: Readonly<Record<string, string | undefined>>
}

/** The process's own streams and environment. */
export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
}

/** Exit codes: 0 success, 1 the operation failed or found a problem, 2 bad usage. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2 })
