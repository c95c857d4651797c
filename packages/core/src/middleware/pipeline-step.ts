import type { EncodedMessage } from '../message/message.js'
import type { Middleware, Outcome, ProcessEvent } from '../plugin/middleware-interface.js'

/** Message option holding a pipeline's remaining steps. */
export const PIPELINE_OPTION = 'pipeline'

/** @internal The remaining steps of a pipeline, stored with its current step. */
export interface PipelineState {
  readonly id: string
  readonly steps: readonly EncodedMessage[]
}

/**
 * @internal After a pipeline step succeeds, sends the next step with the
 * result appended to its arguments, in the same transaction as the ack. A
 * failed step sends nothing, which stops the pipeline.
 */
export function pipelineStep(): Middleware {
  return {
    process(event, next) {
      const state = event.message.options[PIPELINE_OPTION] as PipelineState | undefined
      return state ? next().then((outcome) => continuePipeline(event, state, outcome)) : next()
    },
  }
}

function continuePipeline(event: ProcessEvent, state: PipelineState, outcome: Outcome): Outcome {
  if (outcome.kind !== 'success' || state.steps.length === 0) return outcome
  const [step, ...rest] = state.steps
  const options: Record<string, unknown> = { ...step!.options }
  if (rest.length > 0) options[PIPELINE_OPTION] = { id: state.id, steps: rest }
  else delete options[PIPELINE_OPTION]
  event.enqueueAfter(
    event.messageFor(step!.actor, [...step!.args, outcome.result], {
      id: step!.id,
      queue: step!.queue,
      priority: step!.priority,
      options,
    }),
  )
  return outcome
}
