import { randomBytes, timingSafeEqual } from 'node:crypto'

/** @internal The double-submit cookie's name. */
export const CSRF_COOKIE = 'iddqueue_csrf'
/** @internal The form field (or `x-csrf-token` header) that must repeat the cookie. */
export const CSRF_FIELD = '_csrf'

/** @internal The token of the request's cookie, if it carries a well-formed one. */
export function csrfCookie(request: Request): string | undefined {
  const header = request.headers.get('cookie')
  if (!header) return undefined
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=')
    if (name === CSRF_COOKIE) {
      const value = rest.join('=')
      return /^[A-Za-z0-9_-]{32,64}$/.test(value) ? value : undefined
    }
  }
  return undefined
}

/** @internal A new random token. */
export function newCsrfToken(): string {
  return randomBytes(24).toString('base64url')
}

/** @internal The Set-Cookie value for a token: script-proof, same-site only, scoped to the dashboard. */
export function csrfSetCookie(token: string, path: string, secure: boolean): string {
  return `${CSRF_COOKIE}=${token}; Path=${path || '/'}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

/**
 * @internal Why a mutation must be refused, or undefined when it may go on:
 * the browser says it came from another site (`Origin`, `Sec-Fetch-Site`),
 * or the form's token does not repeat the cookie's (double submit: another
 * site can make the browser send the cookie, never read it).
 */
export function csrfRefusal(request: Request, submitted: string | undefined): string | undefined {
  const origin = request.headers.get('origin')
  if (origin !== null && origin !== new URL(request.url).origin)
    return `cross-origin request from ${origin}`
  const site = request.headers.get('sec-fetch-site')
  if (site !== null && site !== 'same-origin' && site !== 'none')
    return `cross-site request (Sec-Fetch-Site: ${site})`
  const cookie = csrfCookie(request)
  const token = submitted ?? request.headers.get('x-csrf-token') ?? undefined
  if (!cookie || !token) return 'missing CSRF token'
  const a = Buffer.from(cookie)
  const b = Buffer.from(token)
  if (a.length !== b.length || !timingSafeEqual(a, b)) return 'CSRF token mismatch'
  return undefined
}

/**
 * @internal The Content-Security-Policy of every page: scripts and styles only
 * from the dashboard's own static files (no inline script, no eval), no
 * frames, forms only back to the dashboard.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ')
