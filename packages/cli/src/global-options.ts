/** Options every command takes; they come before the command, as in `iddqueue --schema jobs migrate`. */
export interface GlobalOptions {
  /** `--url`, else `DATABASE_URL`. */
  readonly url: string
  /** `--schema`, default `iddqueue`. */
  readonly schema: string
  /** `--prefix`, default none. */
  readonly prefix: string
}
