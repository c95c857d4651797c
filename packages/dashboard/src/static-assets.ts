import { readFile } from 'node:fs/promises'

/** @internal The files under `static/` the dashboard serves, with their types. */
export const STATIC_ASSETS: Readonly<Record<string, string>> = {
  'htmx.min.js': 'text/javascript; charset=utf-8',
  'dashboard.js': 'text/javascript; charset=utf-8',
  'dashboard.css': 'text/css; charset=utf-8',
}

const cache = new Map<string, Promise<Uint8Array>>()

/**
 * @internal A static file's bytes, read once. `static/htmx.min.js` is the
 * htmx.org package's own minified file, vendored (see `static/README.md`):
 * no client build, no CDN. The path is resolved from this module, which is
 * `src/` in tests and `dist/` once built: both sit beside `static/`.
 */
export function staticAsset(name: string): Promise<Uint8Array> {
  let found = cache.get(name)
  if (!found) {
    found = readFile(new URL(`../static/${name}`, import.meta.url)).then((b) => new Uint8Array(b))
    cache.set(name, found)
  }
  return found
}
