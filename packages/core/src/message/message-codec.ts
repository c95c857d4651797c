import { InvalidPayloadError, PayloadTooLargeError } from '../errors.js'

/**
 * Default limit on a message's encoded arguments plus options: 1 MiB.
 *
 * @example
 * const broker = createBroker({ url, maxPayloadBytes: 4 * DEFAULT_MAX_PAYLOAD_BYTES }) // 4 MiB
 */
export const DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024

/**
 * The deepest nesting of arrays and objects a payload may have, the
 * arguments list (or the options object, or a stored result) counting as
 * the first level. Deeper values are refused with `InvalidPayloadError`:
 * encoding and checking them recursively would exhaust the call stack
 * (a plain `RangeError`) long before PostgreSQL's jsonb, which accepts
 * this depth, refuses them.
 *
 * @example
 * let nested: unknown = 'leaf'
 * for (let i = 0; i < MAX_PAYLOAD_DEPTH; i++) nested = [nested]
 * await actor.send(nested) // InvalidPayloadError: args[0][0]… is nested deeper than 256 levels
 */
export const MAX_PAYLOAD_DEPTH = 256

/** A value's path for an error message: `args[0].user["first name"]`. */
function pathOf(root: string, keys: readonly (string | number)[]): string {
  let path = root
  for (const key of keys) {
    if (typeof key === 'number') path += `[${key}]`
    else path += /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
  }
  return path
}

/**
 * Where {@link check} is: the root's name and the keys below it, kept as a
 * stack so that a path is built only for a value that is refused.
 */
interface Walk {
  readonly root: string
  readonly keys: (string | number)[]
  readonly seen: Set<object>
}

function refuse(walk: Walk, what: string, hint = ''): InvalidPayloadError {
  return new InvalidPayloadError(
    `${pathOf(walk.root, walk.keys)} ${what}, which does not survive JSON${hint ? `; ${hint}` : ''}`,
  )
}

/**
 * Checks that `value` comes back from JSON (and PostgreSQL's jsonb) exactly
 * as it went in. Refused, with the path of the offending value: BigInt,
 * functions, symbols, `undefined` in arrays, non-finite numbers, Dates, Maps,
 * class instances, cycles, `\u0000` and unpaired surrogates in strings and
 * object keys, and nesting deeper than {@link MAX_PAYLOAD_DEPTH}.
 */
function check(value: unknown, walk: Walk): void {
  switch (typeof value) {
    case 'string':
      if (value.includes('\u0000'))
        throw refuse(walk, 'contains \\u0000', 'PostgreSQL jsonb refuses it')
      if (!value.isWellFormed()) throw refuse(walk, 'contains an unpaired surrogate')
      return
    case 'number':
      if (!Number.isFinite(value)) throw refuse(walk, `is ${value}`)
      return
    case 'boolean':
      return
    case 'bigint':
      throw refuse(walk, 'is a BigInt', 'pass it as a string')
    case 'function':
      throw refuse(walk, 'is a function')
    case 'symbol':
      throw refuse(walk, 'is a symbol')
    case 'undefined':
      throw refuse(walk, 'is undefined')
  }
  if (value === null) return
  const object = value as object
  const { keys, seen } = walk
  if (keys.length >= MAX_PAYLOAD_DEPTH)
    throw new InvalidPayloadError(
      `${pathOf(walk.root, keys)} is nested deeper than ${MAX_PAYLOAD_DEPTH} levels of arrays and objects (MAX_PAYLOAD_DEPTH); flatten it`,
    )
  if (seen.has(object)) throw refuse(walk, 'is a circular reference')
  if (Array.isArray(object)) {
    seen.add(object)
    for (let index = 0; index < object.length; index++) {
      keys.push(index)
      check(object[index], walk)
      keys.pop()
    }
    seen.delete(object)
    return
  }
  const proto = Object.getPrototypeOf(object)
  if (proto !== Object.prototype && proto !== null) {
    const name = object.constructor?.name ?? 'object'
    throw refuse(
      walk,
      `is a ${name}`,
      object instanceof Date ? 'pass date.toISOString() or a timestamp' : 'pass a plain object',
    )
  }
  seen.add(object)
  for (const key of Object.keys(object)) {
    const item = (object as Record<string, unknown>)[key]
    keys.push(key)
    // Keys go through jsonb too, which refuses the same characters as in values.
    if (key.includes('\u0000'))
      throw refuse(walk, 'is a key that contains \\u0000', 'PostgreSQL jsonb refuses it')
    if (!key.isWellFormed()) throw refuse(walk, 'is a key that contains an unpaired surrogate')
    // An undefined property disappears in JSON, as it reads back: allowed.
    if (item !== undefined) check(item, walk)
    keys.pop()
  }
  seen.delete(object)
}

function checkAt(value: unknown, root: string): void {
  check(value, { root, keys: [], seen: new Set() })
}

/**
 * Encodes a message's arguments as JSON after checking they survive the
 * round trip. Trailing `undefined` arguments (omitted optional parameters)
 * are dropped.
 *
 * @example
 * encodeArgs([1, { a: 'b' }]) // '[1,{"a":"b"}]'
 * encodeArgs([10n])          // throws InvalidPayloadError: args[0] is a BigInt ...
 */
export function encodeArgs(args: readonly unknown[]): string {
  let end = args.length
  while (end > 0 && args[end - 1] === undefined) end--
  const kept = end === args.length ? args : args.slice(0, end)
  checkAt(kept, 'args')
  return JSON.stringify(kept)
}

/** Encodes message options the same way as {@link encodeArgs}. */
export function encodeOptions(options: Readonly<Record<string, unknown>>): string {
  return encodeJson(options, 'options')
}

/**
 * Encodes `value` as JSON after checking it comes back from JSON and
 * PostgreSQL's jsonb exactly as it went in, by the rules message arguments
 * follow; a value that would not is refused with `InvalidPayloadError`
 * naming its path under `path`. For plugins that store values (results).
 *
 * @example
 * encodeJson({ total: 3 }, 'result')      // '{"total":3}'
 * encodeJson({ at: new Date() }, 'result') // throws InvalidPayloadError: result.at is a Date, ...
 */
export function encodeJson(value: unknown, path: string): string {
  checkAt(value, path)
  return JSON.stringify(value)
}

/**
 * Refuses a payload larger than `maxBytes`, naming the actor and both sizes.
 */
export function assertPayloadSize(actor: string, bytes: number, maxBytes: number): void {
  if (bytes > maxBytes) {
    throw new PayloadTooLargeError(
      `Message for actor ${actor} is ${bytes} bytes of JSON, over the limit of ${maxBytes} bytes (maxPayloadBytes)`,
    )
  }
}
