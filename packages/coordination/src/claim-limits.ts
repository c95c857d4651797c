import type { ActorDefinition, ClaimClauses, SettleClauses } from '@iddqueue/core'
import type { Namespace } from '@iddqueue/schema'
import type { CoordinationSetup } from './coordination-setup.js'
import { type DeclaredLimits, limitsOf } from './limit-options.js'
import { limitShape } from './message-limits.js'
import {
  eligibleSql,
  pickSql,
  releaseEffectSql,
  saturatedSql,
  singleLimitPickSql,
  wakeAtSql,
} from './sql/claim-limits-sql.js'

/** @internal `claimClauses`: the limited claim when a message of the worker's queues may carry a limit. */
export function limitClauses(
  setup: CoordinationSetup | undefined,
  queues: readonly string[],
  actors: readonly ActorDefinition[],
  declared: DeclaredLimits,
): ClaimClauses | undefined {
  const { places, rated } = limitShape(queues, actors, declared)
  if (!setup || places === 0) return undefined
  return {
    with: saturatedSql(setup.ns),
    eligible: eligibleSql(places),
    wakeAt: wakeAtSql(setup.ns),
    // The saturated limits only spare the pick its refusals; without them,
    // messages of one concurrency limit each have a pick of their own
    // (decision 0019).
    prefilter: {
      stepped: 'exists (select 1 from claim_saturated)',
      ...(places === 1 && !rated
        ? { pick: { overfetch: 1, ...singleLimitPickSql(setup.ns) } }
        : {}),
    },
    // One candidate per row the claim may take: the pre-filter already steps
    // over the limits saturated at the snapshot (decision 0016).
    pick: { overfetch: 1, ...pickSql(setup.ns, places) },
  }
}

/**
 * @internal `settleClauses`: the settle of a message with a concurrency
 * limit wakes the workers of its queue, whose claims may have come back
 * short for want of its place (decision 0018).
 */
export function releaseSettleClauses(ns: Namespace): SettleClauses {
  return {
    concerns: (message) => limitsOf(message).some((limit) => limit.id[0] === 'c'),
    effect: releaseEffectSql(ns),
  }
}
