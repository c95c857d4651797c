/**
 * Options every command takes, usually before the command, as in
 * `iddqueue --schema jobs migrate` (after it works too).
 *
 * @example
 * const options: GlobalOptions = { url: 'postgres://localhost/app', schema: 'jobs', prefix: '' }
 */
export interface GlobalOptions {
  /** `--url`, else `DATABASE_URL`. */
  readonly url: string
  /** `--schema`, default `iddqueue`. */
  readonly schema: string
  /** `--prefix`, default none. */
  readonly prefix: string
}
