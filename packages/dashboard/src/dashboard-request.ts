import type { PageContext } from './html/page-context.js'
import { csrfCookie, csrfSetCookie, newCsrfToken } from './security/csrf.js'

/** @internal A request below the mount point: its path there, its query, its CSRF token. */
export class DashboardRequest {
  readonly url: URL
  /** The path below the mount point, starting with '/'. */
  readonly path: string
  readonly query: URLSearchParams
  /** The token of the cookie, or a new one to set on the response. */
  readonly csrf: string
  readonly newToken: boolean

  constructor(
    readonly request: Request,
    readonly base: string,
    path: string,
  ) {
    this.url = new URL(request.url)
    this.path = path
    this.query = this.url.searchParams
    const cookie = csrfCookie(request)
    this.csrf = cookie ?? newCsrfToken()
    this.newToken = cookie === undefined
  }

  page(readOnly: boolean): PageContext {
    const notice = this.query.get('notice') ?? undefined
    const error = this.query.get('error') ?? undefined
    const kept = new URLSearchParams(this.query)
    kept.delete('notice')
    kept.delete('error')
    const search = kept.toString()
    return {
      base: this.base,
      here: `${this.path}${search ? `?${search}` : ''}`,
      csrf: this.csrf,
      readOnly,
      ...(notice ? { notice } : {}),
      ...(error ? { error } : {}),
    }
  }

  /** Headers every response carries; the CSRF cookie when the request had none. */
  headers(extra: Record<string, string> = {}): Headers {
    const headers = new Headers(extra)
    if (this.newToken)
      headers.append(
        'set-cookie',
        csrfSetCookie(this.csrf, this.base || '/', this.url.protocol === 'https:'),
      )
    return headers
  }
}
