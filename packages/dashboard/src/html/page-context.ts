/** @internal What every view needs besides its data. */
export interface PageContext {
  /** The mount point, without a trailing slash ('' at the root). */
  readonly base: string
  /** This page's path below the mount point with its query string, for "return here" fields. */
  readonly here: string
  /** The CSRF token to repeat in forms. */
  readonly csrf: string
  readonly readOnly: boolean
  readonly notice?: string
  readonly error?: string
}
