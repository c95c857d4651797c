import { TransactionalActorError } from '../errors.js'
import type { BrokerContext } from '../runtime/broker-context.js'
import { RESERVED_CONNECTIONS } from '../runtime/transaction-source.js'

/**
 * @internal How many transactional handlers a worker runs at once, each
 * holding a pool connection: `transactionalConcurrency` when given, else
 * its `concurrency` capped by what the pool allows (its size less the
 * connections the worker keeps for claims and settles). Refuses with
 * `TransactionalActorError`, before any SQL, a configuration that cannot
 * work: transactional actors in `queues` (all declared actors when
 * `queues` is undefined) on a broker that cannot open transactions or whose
 * pool leaves none for them, or an explicit `transactionalConcurrency`
 * above what the pool allows.
 */
export function transactionalConcurrency(
  core: BrokerContext,
  concurrency: number,
  requested: number | undefined,
  queues: readonly string[] | undefined,
): number {
  const capacity = core.transactionPermits.capacity
  const transactional = [...core.actors.values()].filter(
    (a) => a.options.transactional && (queues === undefined || queues.includes(a.queue)),
  )
  if (transactional.length > 0) {
    const names = transactional.map((a) => a.name).join(', ')
    const reason = core.transactions.unavailable
    if (reason !== undefined) {
      throw new TransactionalActorError(
        `Transactional actors (${names}) cannot run on this broker: ${reason}; give it a url, a postgres.js pool or a Kysely instance`,
      )
    }
    if (capacity < 1) {
      throw new TransactionalActorError(
        `Transactional actors (${names}) need a pool of at least ${RESERVED_CONNECTIONS + 1} connections (${RESERVED_CONNECTIONS} stay with the worker); poolSize is ${core.transactions.poolSize}`,
      )
    }
  }
  if (requested !== undefined && requested > capacity) {
    throw new TransactionalActorError(
      `Invalid worker option transactionalConcurrency ${requested}: each transactional handler holds a connection, and the pool of ${core.transactions.poolSize} allows at most ${capacity} (${RESERVED_CONNECTIONS} stay with the worker); raise poolSize or lower transactionalConcurrency`,
      // The fields of InvalidOptionError, set as refuseOption sets them.
      {
        option: 'transactionalConcurrency',
        value: requested,
        expected: `an integer of at most ${capacity} (this pool's capacity)`,
      },
    )
  }
  return Math.min(requested ?? concurrency, concurrency, Math.max(capacity, 1))
}
