import { describeValue } from '@iddqueue/schema'
import { PIPELINE_OPTION } from '../middleware/pipeline-step.js'
import type { Delivery } from './delivery.js'

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function kindOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

function pipelineProblem(state: unknown): string | undefined {
  if (!isPlainObject(state))
    return `options.${PIPELINE_OPTION} is ${kindOf(state)}, expected an object`
  if (typeof state.id !== 'string') return `options.${PIPELINE_OPTION}.id is not a string`
  if (!Array.isArray(state.steps)) return `options.${PIPELINE_OPTION}.steps is not an array`
  for (let i = 0; i < state.steps.length; i++) {
    const step: unknown = state.steps[i]
    const at = `options.${PIPELINE_OPTION}.steps[${i}]`
    if (!isPlainObject(step)) return `${at} is ${kindOf(step)}, expected a message`
    if (
      typeof step.id !== 'string' ||
      typeof step.actor !== 'string' ||
      typeof step.queue !== 'string'
    )
      return `${at} lacks a string id, actor or queue`
    if (!Array.isArray(step.args)) return `${at}.args is ${kindOf(step.args)}, expected an array`
    if (!isPlainObject(step.options))
      return `${at}.options is ${kindOf(step.options)}, expected an object`
    if (!Number.isSafeInteger(step.priority)) return `${at}.priority is not an integer`
  }
  return undefined
}

/**
 * @internal What is wrong with a claimed row iddqueue could not have written
 * (edited by hand or by another tool), or undefined when it is well formed:
 * arguments a JSON array, options a JSON object, a pipeline's state the
 * shape `Pipeline` stores, a retry count that is a non-negative integer.
 * The worker rejects such a message with this text as its failure instead
 * of handing it to the handler or failing halfway through it.
 *
 * @example
 * deliveryProblem({ ...delivery, args: { a: 1 } }) // 'args is an object, expected an array'
 */
export function deliveryProblem(delivery: Delivery): string | undefined {
  if (!Array.isArray(delivery.args)) return `args is ${kindOf(delivery.args)}, expected an array`
  if (!isPlainObject(delivery.options))
    return `options is ${kindOf(delivery.options)}, expected an object`
  if (!Number.isSafeInteger(delivery.retries) || delivery.retries < 0)
    return `retries is ${describeValue(delivery.retries)}, expected a non-negative integer`
  if (PIPELINE_OPTION in delivery.options) return pipelineProblem(delivery.options[PIPELINE_OPTION])
  return undefined
}
