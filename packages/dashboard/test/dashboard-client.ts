import { expect } from 'vitest'
import type { Dashboard } from '../src/index.js'

export const ORIGIN = 'http://dash.test'

/** Drives a dashboard handler like a browser: keeps its CSRF cookie, reads the token from pages. */
export class DashboardClient {
  cookie: string | undefined
  token: string | undefined

  constructor(readonly dashboard: Dashboard) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const response = await this.dashboard(
      new Request(`${ORIGIN}${path}`, { headers: { ...this.#cookieHeader(), ...headers } }),
    )
    this.#remember(response)
    return response
  }

  async page(path: string): Promise<string> {
    const response = await this.get(path)
    const body = await response.text()
    expect(response.status, `${path}: ${body.slice(0, 500)}`).toBe(200)
    const token = /name="csrf-token" content="([^"]+)"/.exec(body)?.[1]
    if (token) this.token = token
    return body
  }

  /** Posts a form as the page would (same origin, the token), unless `init` says otherwise. */
  async post(
    path: string,
    fields: Record<string, string | string[]> = {},
    init: { readonly headers?: Record<string, string>; readonly token?: string | null } = {},
  ): Promise<Response> {
    if (this.token === undefined && init.token === undefined) await this.page('/')
    const body = new URLSearchParams()
    const token = init.token === undefined ? this.token : init.token
    if (token !== null && token !== undefined) body.set('_csrf', token)
    for (const [name, value] of Object.entries(fields)) {
      for (const v of Array.isArray(value) ? value : [value]) body.append(name, v)
    }
    const response = await this.dashboard(
      new Request(`${ORIGIN}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: ORIGIN,
          ...this.#cookieHeader(),
          ...init.headers,
        },
        body,
      }),
    )
    this.#remember(response)
    return response
  }

  #cookieHeader(): Record<string, string> {
    return this.cookie ? { cookie: this.cookie } : {}
  }

  #remember(response: Response) {
    const set = response.headers.getSetCookie().find((c) => c.startsWith('iddqueue_csrf='))
    if (set) this.cookie = set.split(';')[0]
  }
}
