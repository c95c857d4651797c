import type { Message, SettledMessage } from '@iddqueue/core'
import { type EncodedResult, encodeResult } from './encode-result.js'
import type { StoredFailure } from './errors.js'
import type { ActorResultsPolicy } from './results-options.js'

/** A row for the `results` table. */
export interface ResultRow {
  readonly id: string
  readonly status: 'success' | 'failure' | 'cancelled'
  readonly value: string | null
  readonly failure: string | null
  readonly ttlMs: number
}

function failureRow(
  id: string,
  status: 'failure' | 'cancelled',
  failure: StoredFailure,
  ttlMs: number,
): ResultRow {
  return { id, status, value: null, failure: JSON.stringify(failure), ttlMs }
}

/** The remaining steps of a pipeline, as core stores them on a step (option `pipeline`). */
function pipelineSteps(message: Message): { id: string; actor: string }[] {
  const state = message.options.pipeline as { steps?: unknown } | undefined
  if (!Array.isArray(state?.steps)) return []
  return state.steps.filter(
    (step): step is { id: string; actor: string } =>
      typeof step?.id === 'string' && typeof step?.actor === 'string',
  )
}

/**
 * @internal The rows a settle batch stores: a success's value (or why it
 * cannot be stored), a final failure, a cancellation; for a pipeline step
 * that failed for good, the same failure for the steps that will never run.
 * Attempts that will be retried (`queued`) store nothing. Only plain,
 * checked values, so the insert cannot fail for reasons of data.
 */
export function resultRows(
  settled: readonly SettledMessage[],
  policies: ReadonlyMap<string, ActorResultsPolicy>,
  encoded: WeakMap<Message, EncodedResult>,
): ResultRow[] {
  const rows = new Map<string, ResultRow>()
  for (const s of settled) {
    const { message } = s
    const policy = policies.get(message.actor)
    let stored: ResultRow | undefined
    if (s.state === 'done' && s.outcome.kind === 'success') {
      if (!policy?.store) continue
      const result = encoded.get(message) ?? encodeResult(s.outcome.result)
      stored = result.ok
        ? {
            id: message.id,
            status: 'success',
            value: result.json,
            failure: null,
            ttlMs: policy.ttlMs,
          }
        : failureRow(
            message.id,
            'failure',
            {
              type: 'ResultNotStored',
              message: `The result of actor ${message.actor} was not stored: ${result.problem}`,
              at: new Date().toISOString(),
              attempt: s.attempt,
            },
            policy.ttlMs,
          )
    } else if (s.state === 'rejected' || s.state === 'cancelled') {
      const status = s.state === 'rejected' ? 'failure' : 'cancelled'
      const failure: StoredFailure =
        status === 'failure' && s.failure
          ? {
              type: s.failure.type,
              message: s.failure.message,
              at: s.failure.at,
              attempt: s.failure.attempt,
            }
          : {
              type: status === 'failure' ? 'Error' : 'MessageCancelled',
              message:
                status === 'failure'
                  ? `Message ${message.id} was rejected`
                  : `Message ${message.id} was cancelled`,
              at: new Date().toISOString(),
              attempt: s.attempt,
            }
      if (policy?.store) stored = failureRow(message.id, status, failure, policy.ttlMs)
      // The steps after a failed pipeline step will never run: they fail too.
      for (const step of pipelineSteps(message)) {
        const stepPolicy = policies.get(step.actor)
        if (stepPolicy?.store)
          rows.set(step.id, failureRow(step.id, status, failure, stepPolicy.ttlMs))
      }
    }
    if (stored) rows.set(stored.id, stored)
  }
  return [...rows.values()]
}
