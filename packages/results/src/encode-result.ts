/** What a handler's result becomes in the `results` table. */
export type EncodedResult =
  | { readonly ok: true; readonly json: string | null }
  | { readonly ok: false; readonly problem: string }

function pathOf(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`
}

/**
 * Why `value` would not come back from JSON and jsonb as it went in, or
 * undefined when it would. The same rules as core's message arguments:
 * BigInt, functions, symbols, `undefined` in arrays, non-finite numbers,
 * Dates, Maps and other class instances, cycles, `\u0000` and unpaired
 * surrogates (which jsonb refuses) in strings and keys.
 */
function problemOf(value: unknown, path: string, seen: Set<object>): string | undefined {
  switch (typeof value) {
    case 'string':
      if (value.includes('\u0000')) return `${path} contains \\u0000, which jsonb refuses`
      return value.isWellFormed() ? undefined : `${path} contains an unpaired surrogate`
    case 'number':
      return Number.isFinite(value) ? undefined : `${path} is ${value}`
    case 'boolean':
      return undefined
    case 'bigint':
    case 'function':
    case 'symbol':
    case 'undefined':
      return `${path} is ${typeof value === 'bigint' ? 'a BigInt' : typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`}`
  }
  if (value === null) return undefined
  const object = value as object
  if (seen.has(object)) return `${path} is a circular reference`
  seen.add(object)
  try {
    if (Array.isArray(object)) {
      for (let index = 0; index < object.length; index++) {
        const problem = problemOf(object[index], pathOf(path, index), seen)
        if (problem) return problem
      }
      return undefined
    }
    const proto = Object.getPrototypeOf(object)
    if (proto !== Object.prototype && proto !== null) {
      return `${path} is a ${object.constructor?.name ?? 'object'}`
    }
    for (const key of Object.keys(object)) {
      if (key.includes('\u0000') || !key.isWellFormed())
        return `${pathOf(path, key)} is a key that jsonb refuses`
      const item = (object as Record<string, unknown>)[key]
      // An undefined property disappears in JSON, as it reads back: allowed.
      if (item === undefined) continue
      const problem = problemOf(item, pathOf(path, key), seen)
      if (problem) return problem
    }
    return undefined
  } finally {
    seen.delete(object)
  }
}

/**
 * Encodes a handler's result for storage, or says why it cannot be stored.
 * `undefined` (a handler that returns nothing) is stored as SQL null and
 * reads back as `undefined`; `null` reads back as `null`.
 *
 * @example
 * encodeResult({ total: 3 }) // { ok: true, json: '{"total":3}' }
 * encodeResult(10n)          // { ok: false, problem: 'result is a BigInt' }
 */
export function encodeResult(value: unknown): EncodedResult {
  if (value === undefined) return { ok: true, json: null }
  let problem: string | undefined
  let json: string | undefined
  try {
    problem = problemOf(value, 'result', new Set())
    if (!problem) json = JSON.stringify(value)
  } catch (error) {
    // A getter that throws, a proxy, a structure deep enough to overflow the stack.
    problem = `result could not be read (${error instanceof Error ? error.message : String(error)})`
  }
  if (problem || json === undefined)
    return { ok: false, problem: `${problem ?? 'result'}, which does not survive JSON` }
  return { ok: true, json }
}
