import { checkPriority, invalidOption } from '../options/check-option.js'

/**
 * @internal Refuses message fields that would fail in SQL, on every path
 * that builds a message (`actor.message`, `messageWithOptions`,
 * `broker.message`, callbacks, pipeline steps, follow-ups): arguments that
 * are not an array, a priority PostgreSQL's `integer` cannot hold, options
 * that are not an object.
 */
export function checkMessage(
  actor: string,
  args: unknown,
  priority: unknown,
  options: unknown,
): void {
  const where = `for actor ${actor}`
  if (!Array.isArray(args)) throw invalidOption('arguments', args, 'an array', where)
  checkPriority(priority, { where })
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidOption('message options', options, 'a plain object', where)
  }
}
