import type { Middleware } from '../plugin/middleware-interface.js'
import { ageLimit } from './age-limit.js'
import { callbacks } from './callbacks.js'
import { currentMessageMiddleware } from './current-message.js'
import { pipelineStep } from './pipeline-step.js'
import { retries } from './retries.js'
import { timeLimit } from './time-limit.js'

/**
 * @internal Core's own middleware, outermost first: current message, age
 * limit (skips before anything runs), callbacks (see the final decision),
 * retries, pipeline steps, time limit. Plugins' middleware runs inside these
 * (closer to the handler), so a plugin sees each attempt's raw outcome and
 * its time counts toward the time limit; final decisions reach plugins
 * through the settle hook.
 */
export function defaultMiddleware(options: { currentMessage: boolean }): Middleware[] {
  return [
    ...(options.currentMessage ? [currentMessageMiddleware()] : []),
    ageLimit(),
    callbacks(),
    retries(),
    pipelineStep(),
    timeLimit(),
  ]
}
