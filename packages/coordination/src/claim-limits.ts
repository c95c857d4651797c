import type { ActorDefinition, ClaimClauses, SettleClauses } from '@iddqueue/core'
import type { Namespace } from '@iddqueue/schema'
import type { CoordinationSetup } from './coordination-setup.js'
import { type DeclaredLimits, limitsOf } from './limit-options.js'
import { limitPlaces } from './message-limits.js'
import {
  driftSql,
  eligibleSql,
  lockSlotsSql,
  pickSql,
  rebuildSlotsSql,
  releaseClauses,
  saturatedSql,
  wakeAtSql,
} from './sql/claim-limits-sql.js'

/**
 * Candidates a limited claim locks per row it may claim. One (decision
 * 0016): the pre-filter already steps over the limits saturated at the
 * snapshot, and every extra candidate is a row lock written and ranked for
 * nothing; twice the batch drained 1,000 keys no faster.
 */
const OVERFETCH = 1

/** @internal `claimClauses`: the limited claim when a message of the worker's queues may carry a limit. */
export function limitClauses(
  setup: CoordinationSetup | undefined,
  queues: readonly string[],
  actors: readonly ActorDefinition[],
  declared: DeclaredLimits,
): ClaimClauses | undefined {
  const places = limitPlaces(queues, actors, declared)
  if (!setup || places === 0) return undefined
  return {
    with: saturatedSql(setup.ns),
    eligible: eligibleSql(places),
    wakeAt: wakeAtSql(setup.ns),
    pick: { overfetch: OVERFETCH, ...pickSql(setup.ns, OVERFETCH) },
  }
}

/**
 * @internal `settleClauses`: the settle of a message with a concurrency
 * limit frees its places in the same statement (decision 0016).
 */
export function releaseSettleClauses(ns: Namespace): SettleClauses {
  return {
    concerns: (message) => limitsOf(message).some((limit) => limit.id[0] === 'c'),
    ...releaseClauses(ns),
  }
}

/**
 * @internal Rebuilds the counters that disagree with the `consumed` rows:
 * after crash recovery requeued a dead worker's messages, or rows were
 * handed back outside a settle. Under row locks taken in slot order, then a
 * fresh count, so it never frees a slot a claim holds.
 */
export async function reconcileSlots(setup: CoordinationSetup): Promise<number> {
  const drift = await setup.executor.query<{ scope: string; name: string }>(driftSql(setup.ns))
  if (drift.length === 0) return 0
  const params = [drift.map((d) => d.scope), drift.map((d) => d.name)]
  await setup.executor.transaction(async (tx) => {
    await tx.query(lockSlotsSql(setup.ns), params)
    await tx.query(rebuildSlotsSql(setup.ns), params)
  })
  return drift.length
}
