/**
 * A short, safe rendering of any value for an error message: strings quoted,
 * numbers and the like as `String()` writes them, other objects by kind.
 * Never throws (`String()` does, on an object without a prototype or a
 * symbol in a template), and never runs the value's own `toString`, which
 * could throw, print a secret, or take forever.
 *
 * @example
 * describeValue('emails')               // '"emails"'
 * describeValue(Object.create(null))    // 'an object'
 * describeValue(new Date(Number.NaN))   // 'Invalid Date'
 * throw new InvalidOptionError(`Invalid limit ${describeValue(limit)}: expected an integer`)
 */
export function describeValue(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > 256 ? `${value.slice(0, 256)}…` : value)
    case 'number':
    case 'boolean':
    case 'undefined':
      return String(value)
    case 'bigint':
      return `${value}n`
    case 'symbol':
      return 'a symbol'
    case 'function':
      return 'a function'
  }
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (value instanceof Date) {
    const time = dateTime(value)
    if (time !== undefined) return Number.isNaN(time) ? 'Invalid Date' : 'a Date'
  }
  return 'an object'
}

/** Date's own `getTime`; undefined for an object that only inherits from Date.prototype (it throws). */
function dateTime(value: Date): number | undefined {
  try {
    return Date.prototype.getTime.call(value)
  } catch {
    return undefined
  }
}
