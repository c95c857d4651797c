import { type IddqueuePlugin, InvalidOptionError, type Message, SetupLatch } from '@iddqueue/core'
import { describeValue } from '@iddqueue/schema'
import { Barrier, type BarrierOptions } from './barrier.js'
import { BucketLimiter, type BucketLimiterOptions } from './bucket-limiter.js'
import { checkDuration, checkInteger } from './check.js'
import { limitClauses, releaseSettleClauses } from './claim-limits.js'
import { ConcurrentLimiter, type ConcurrentLimiterOptions } from './concurrent-limiter.js'
import type { CoordinationSetup } from './coordination-setup.js'
import { RateLimited } from './errors.js'
import { CoordinatedGroup } from './group.js'
import { groupOf, settleGroups } from './group-settle.js'
import { KeyWaiters } from './key-waiters.js'
import {
  checkDeclaredLimits,
  checkLimitOptions,
  type DeclaredLimit,
  type DeclaredValues,
  declaredList,
  keylessLimits,
} from './limit-options.js'
import type { Limiter } from './limiter.js'
import {
  type LimitInfo,
  type LimitTarget,
  type LimitValues,
  listLimits,
  setLimit,
} from './limits.js'
import { limitOptions } from './message-limits.js'
import { migrationSet } from './migrations.js'
import { purgeCoordination } from './purge.js'
import { holdKeySql } from './sql/limits-sql.js'
import { WindowLimiter, type WindowLimiterOptions } from './window-limiter.js'

/** Rows per purge statement. */
const PURGE_BATCH = 5_000

/**
 * Options of {@link coordination}.
 *
 * @example
 * const coord = coordination({
 *   groupTtlMs: 3_600_000,
 *   limits: [{ queue: 'emails', concurrency: 8, rate: { limit: 50, periodMs: 1_000 } }],
 * })
 */
export interface CoordinationOptions {
  /** How long a group's state lives by default, in ms. Default 86,400,000 (one day). */
  readonly groupTtlMs?: number
  /** How often waiters recheck when the broker cannot LISTEN (`pollOnly`), in ms. Default 250. */
  readonly pollIntervalMs?: number
  /** How often the broker deletes expired coordination rows, in ms; `false` never. Default hourly. */
  readonly purgeIntervalMs?: number | false
  /**
   * Limits the claim enforces on every message of a queue or of an actor,
   * beside the actors' own `concurrency` and `rate` options. Checked here:
   * a bad value or an unknown key throws `InvalidOptionError`.
   */
  readonly limits?: readonly DeclaredLimit[]
}

/**
 * Options of {@link CoordinationPlugin.purge}.
 *
 * @example
 * await coord.purge({ batchSize: 1_000 })
 */
export interface PurgeCoordinationOptions {
  /** Rows per statement. Default 5,000. */
  readonly batchSize?: number
}

/**
 * The coordination plugin: put it in `createBroker({ plugins })`, then make
 * limiters, barriers and groups from it.
 *
 * @example
 * const coord: CoordinationPlugin = coordination()
 * const broker = createBroker({ url, plugins: [coord] })
 * const api = coord.concurrentLimiter('external-api', { limit: 5, ttlMs: 60_000 })
 */
export interface CoordinationPlugin extends IddqueuePlugin {
  /**
   * A limiter allowing at most `limit` holders at once, across every
   * process. A slot frees on `release()`, or by itself after `ttlMs`.
   *
   * @example
   * const api = coord.concurrentLimiter('external-api', { limit: 5, ttlMs: 60_000 })
   * await api.withLimit(() => callExternalApi(), { waitMs: 10_000 })
   */
  concurrentLimiter(key: string, options: ConcurrentLimiterOptions): Limiter
  /**
   * A limiter granting at most `limit` per fixed bucket of `bucketMs`.
   *
   * @example
   * const sms = coord.bucketLimiter('sms', { limit: 10, bucketMs: 1_000 })
   * await sms.acquire({ waitMs: 5_000 })
   */
  bucketLimiter(key: string, options: BucketLimiterOptions): Limiter
  /**
   * A limiter granting at most `limit` within any sliding `windowMs`.
   *
   * @example
   * const geocoder = coord.windowLimiter('geocoder', { limit: 50, windowMs: 1_000 })
   * const lease = await geocoder.tryAcquire()
   */
  windowLimiter(key: string, options: WindowLimiterOptions): Limiter
  /**
   * A barrier that opens when `parties` arrivals are counted, across processes.
   *
   * @example
   * const barrier = coord.barrier(`batch:${id}`, { parties: 3, ttlMs: 600_000 })
   * await barrier.create()
   */
  barrier(key: string, options: BarrierOptions): Barrier
  /**
   * Messages run independently, with a completion callback sent exactly
   * once when all succeeded, and a failure callback once when one fails for
   * good.
   *
   * @example
   * await coord.group([a.message(1), a.message(2)]).run({ onCompletion: done.message('batch-1') })
   */
  group<const M extends readonly Message[]>(messages: M): CoordinatedGroup<M>
  /**
   * Deletes expired slots, buckets, window hits, barriers, groups and idle
   * claim rate windows of the
   * broker's namespace, in bounded batches, and returns how many rows.
   * Brokers with the plugin also do it every `purgeIntervalMs`.
   *
   * @example
   * const deleted = await coord.purge()
   */
  purge(options?: PurgeCoordinationOptions): Promise<number>
  /**
   * Sets (or, with `null` values, clears) a limit for a queue, an actor or
   * a key, stored in the plugin's table for every process to read. It
   * overrides the value of a limit the messages carry (declared with the
   * actor options `concurrency` / `rate` or `coordination({ limits })`),
   * from the next claim on; a limit no message carries is stored and
   * listed only (the claim learns which limits a message counts against
   * when it is sent).
   *
   * @example
   * await coord.setLimit({ key: 'customer:42' }, { concurrency: 2, rate: { limit: 10, periodMs: 1_000 } })
   * await coord.setLimit({ key: 'customer:42' }, { concurrency: null, rate: null }) // removed
   */
  setLimit(target: LimitTarget, values: LimitValues): Promise<void>
  /**
   * Every limit: stored ones, the keys `RateLimited` throws hold, and the
   * declared limits the claim has counted, with their running messages and,
   * for a rate, the places free now and when the next one frees.
   *
   * @example
   * const held = (await coord.listLimits()).filter((limit) => limit.heldUntil !== null)
   */
  listLimits(): Promise<LimitInfo[]>
}

/**
 * Limiters, barriers and group callbacks on PostgreSQL, shared by every
 * process on the database: concurrent limiters (slots with a TTL), bucket
 * and window limiters, barriers, and groups whose completion callback is
 * sent exactly once because membership is recorded in the transaction that
 * acknowledges each member. Waiters sleep on the broker's shared LISTEN
 * connection.
 *
 * @example
 * import { createBroker } from '@iddqueue/core'
 * import { coordination } from '@iddqueue/coordination'
 *
 * const coord = coordination()
 * const broker = createBroker({ url: process.env.DATABASE_URL, plugins: [coord] })
 * await broker.migrate() // creates the coordination tables
 * const api = coord.concurrentLimiter('external-api', { limit: 5, ttlMs: 60_000 })
 * broker.actor('sync', async (id: string) => {
 *   await using lease = await api.acquire({ waitMs: 10_000 })
 *   await fetch(`https://api.example.com/sync/${id}`)
 * })
 */
export function coordination(options: CoordinationOptions = {}): CoordinationPlugin {
  if (typeof options !== 'object' || options === null)
    throw new InvalidOptionError('Invalid coordination options: expected an object')
  const groupTtlMs =
    options.groupTtlMs === undefined
      ? 86_400_000
      : checkDuration('coordination()', 'groupTtlMs', options.groupTtlMs)
  // Both arm Node timers, which fire at once past 2^31 - 1 ms: checkInteger's bound.
  const pollIntervalMs =
    options.pollIntervalMs === undefined
      ? 250
      : checkInteger('coordination()', 'pollIntervalMs', options.pollIntervalMs)
  const purgeIntervalMs =
    options.purgeIntervalMs === undefined || options.purgeIntervalMs === false
      ? (options.purgeIntervalMs ?? 3_600_000)
      : checkInteger('coordination()', 'purgeIntervalMs', options.purgeIntervalMs)
  const declared = checkDeclaredLimits(options.limits)
  const latch = new SetupLatch<CoordinationSetup>('coordination()')
  // The limits of this process's actors without a key, which listLimits() shows.
  const actorLimits = new Map<string, DeclaredValues>()

  return {
    name: migrationSet.owner,
    migrations: migrationSet.migrations,
    actorOptions: ['concurrency', 'rate'],
    checkActor(actor) {
      checkLimitOptions(actor, declared)
      actorLimits.set(actor.name, keylessLimits(actor))
    },
    messageOptions: (build) => limitOptions(build, declared),
    claimClauses: (queues, actors) => limitClauses(latch.current, queues, actors, declared),
    settleClauses: releaseSettleClauses,
    middleware: {
      // A RateLimited throw hands the message back, due when the limit
      // ends, with its retry budget intact; the retry middleware (outside
      // this one) lets a requeue pass.
      async process(_event, next) {
        const outcome = await next()
        if (outcome.kind !== 'failure' || !RateLimited.isInstance(outcome.error)) return outcome
        const limited = outcome.error
        const setup = latch.current
        if (limited.key !== undefined && setup) {
          await setup.executor
            .query(holdKeySql(setup.ns), [limited.key, limited.delayMs])
            .catch((error: unknown) =>
              setup.logger.warn('coordination: could not record a key hold', { error }),
            )
        }
        return { kind: 'requeue', delayMs: limited.delayMs }
      },
      settleFor: (message) => groupOf(message) !== undefined,
      async settle(event) {
        const setup = latch.current
        if (setup) await settleGroups(setup, event)
      },
    },
    async setup(context) {
      const channel = context.namespace.channel('coordination')
      const waiters = new KeyWaiters(context, channel, context.logger)
      const setup: CoordinationSetup = {
        executor: context.executor,
        ns: context.namespace,
        channel,
        waiters,
        pollIntervalMs,
        enqueueMany: context.enqueueMany,
        logger: context.logger,
      }
      latch.set(setup)
      let timer: NodeJS.Timeout | undefined
      if (purgeIntervalMs !== false) {
        timer = setInterval(() => {
          purgeCoordination(setup, PURGE_BATCH).catch((error: unknown) =>
            context.logger.warn('coordination: purge of expired rows failed', { error }),
          )
        }, purgeIntervalMs)
        timer.unref()
      }
      return async () => {
        clearInterval(timer)
        await waiters.close()
        latch.clear()
      }
    },
    concurrentLimiter: (key, limiterOptions) => new ConcurrentLimiter(latch, key, limiterOptions),
    bucketLimiter: (key, limiterOptions) => new BucketLimiter(latch, key, limiterOptions),
    windowLimiter: (key, limiterOptions) => new WindowLimiter(latch, key, limiterOptions),
    barrier: (key, barrierOptions) => new Barrier(latch, key, barrierOptions),
    group: (messages) => new CoordinatedGroup(latch, messages, groupTtlMs),
    setLimit: (target, values) => setLimit(latch, target, values),
    listLimits: () => listLimits(latch, declaredList(declared, actorLimits)),
    async purge(purgeOptions = {}) {
      if (typeof purgeOptions !== 'object' || purgeOptions === null) {
        throw new InvalidOptionError(
          `Invalid purge() options ${describeValue(purgeOptions)}: expected an object`,
        )
      }
      const batchSize = purgeOptions.batchSize ?? PURGE_BATCH
      if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
        throw new InvalidOptionError(
          `Invalid batchSize ${describeValue(purgeOptions.batchSize)}: expected an integer of at least 1`,
        )
      }
      return purgeCoordination(await latch.wait('purge coordination rows'), batchSize)
    },
  }
}
