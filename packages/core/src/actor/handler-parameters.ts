/** @internal How a handler declares its parameters, read from its source. */
export interface HandlerParameters {
  /** Every declared parameter, those with default values included. */
  readonly count: number
  /** The last one is a rest parameter (`...items`). */
  readonly rest: boolean
  /** The last one has a default value (`b = 1`): a context parameter never has one. */
  readonly lastHasDefault: boolean
}

const cache = new WeakMap<object, HandlerParameters>()
const CLOSE: Record<string, string> = { '(': ')', '[': ']', '{': '}' }

/** Index just past the string, template or comment starting at `i`, or `i` if none starts there. */
function skip(source: string, i: number): number {
  const c = source[i]
  if (c === '"' || c === "'" || c === '`') {
    for (let j = i + 1; j < source.length; j++) {
      if (source[j] === '\\') j++
      else if (source[j] === c) return j + 1
      else if (c === '`' && source[j] === '$' && source[j + 1] === '{') j = matching(source, j + 1)
    }
    return source.length
  }
  if (c === '/' && source[i + 1] === '/') {
    const end = source.indexOf('\n', i)
    return end < 0 ? source.length : end + 1
  }
  if (c === '/' && source[i + 1] === '*') {
    const end = source.indexOf('*/', i + 2)
    return end < 0 ? source.length : end + 2
  }
  return i
}

/** Index of the bracket closing the one at `open`. */
function matching(source: string, open: number): number {
  const stack = [CLOSE[source[open]!]!]
  for (let i = open + 1; i < source.length; ) {
    const next = skip(source, i)
    if (next !== i) {
      i = next
      continue
    }
    const c = source[i]!
    if (c in CLOSE) stack.push(CLOSE[c]!)
    else if (c === stack[stack.length - 1] && stack.pop() && stack.length === 0) return i
    i++
  }
  return source.length
}

function parse(source: string): HandlerParameters | undefined {
  let i = 0
  // Find the parameter list: `(…)` of a function, method or arrow, or a bare arrow parameter.
  while (i < source.length && source[i] !== '(') {
    const next = skip(source, i)
    if (next !== i) {
      i = next
      continue
    }
    if (source.startsWith('=>', i)) {
      const head = source
        .slice(0, i)
        .trim()
        .replace(/^async\s+/, '')
      return /^[\w$]+$/.test(head) ? { count: 1, rest: false, lastHasDefault: false } : undefined
    }
    i++
  }
  if (i >= source.length) return undefined
  const end = matching(source, i)
  const params: string[] = []
  let start = i + 1
  for (let j = i + 1; j < end; ) {
    const next = skip(source, j)
    if (next !== j) {
      j = next
      continue
    }
    const c = source[j]!
    if (c in CLOSE) {
      j = matching(source, j) + 1
      continue
    }
    if (c === ',') {
      params.push(source.slice(start, j))
      start = j + 1
    }
    j++
  }
  params.push(source.slice(start, end))
  // Comments and whitespace alone are no parameter (nor is a trailing comma's empty tail).
  const named = params.filter((p) => p.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '').trim() !== '')
  const last = named[named.length - 1]?.trim() ?? ''
  return { count: named.length, rest: last.startsWith('...'), lastHasDefault: hasDefault(last) }
}

/** Whether a parameter's text assigns a default: an `=` outside brackets, strings and comments. */
function hasDefault(parameter: string): boolean {
  for (let i = 0; i < parameter.length; ) {
    const next = skip(parameter, i)
    if (next !== i) {
      i = next
      continue
    }
    const c = parameter[i]!
    if (c in CLOSE) {
      i = matching(parameter, i) + 1
      continue
    }
    if (c === '=') return true
    i++
  }
  return false
}

/**
 * @internal The parameters `handler` declares. `handler.length` stops at the
 * first parameter with a default value, so a context declared after one
 * would be missed: the source tells the whole list. A bound or native
 * function, whose source hides it, falls back to its `length`.
 */
export function handlerParameters(handler: (...args: never[]) => unknown): HandlerParameters {
  let known = cache.get(handler)
  if (!known) {
    const parsed = parse(Function.prototype.toString.call(handler))
    known =
      parsed && parsed.count >= handler.length
        ? parsed
        : { count: handler.length, rest: false, lastHasDefault: false }
    cache.set(handler, known)
  }
  return known
}
