import { type IddqueuePlugin, InvalidOptionError, type Message, SetupLatch } from '@iddqueue/core'
import { describeValue, type Executor, type Namespace } from '@iddqueue/schema'
import { type EncodedResult, encodeResult } from './encode-result.js'
import { migrationSet } from './migrations.js'
import { purgeExpired } from './purge-expired.js'
import { createResultReader } from './read-result.js'
import { ResultLoader } from './result-loader.js'
import { resultRows } from './result-rows.js'
import { resultWaiters } from './result-waiters.js'
import {
  type ActorResultsPolicy,
  actorPolicy,
  type ResultsOptions,
  resolveResultsOptions,
} from './results-options.js'
import { deleteResultsSql } from './sql/purge-results.js'
import { readResultsSql } from './sql/read-results.js'
import { storeResultsSql } from './sql/store-results.js'

/** The plugin's name: its migrations' owner in the ledger. */
const PLUGIN_NAME = migrationSet.owner
/** @internal Ids per notification: 36 bytes each, well under NOTIFY's 8,000-byte payload limit. */
export const IDS_PER_NOTIFICATION = 100
/** Rows per purge statement. */
const PURGE_BATCH = 5_000

/**
 * Options of {@link ResultsPlugin.purgeResults}.
 *
 * @example
 * await plugin.purgeResults({ batchSize: 1_000 })
 */
export interface PurgeResultsOptions {
  /** Rows per statement. Default 5,000. */
  readonly batchSize?: number
}

/**
 * The results plugin: put it in `createBroker({ plugins })`; it also
 * deletes expired results on demand.
 *
 * @example
 * const plugin: ResultsPlugin = results()
 * const broker = createBroker({ url, plugins: [plugin] })
 * const deleted = await plugin.purgeResults()
 */
export interface ResultsPlugin extends IddqueuePlugin {
  /**
   * Deletes expired results of the broker's namespace, in bounded batches,
   * and returns how many. Expired results are never returned anyway; this
   * frees their space. Brokers with the plugin also do it every
   * `purgeIntervalMs` (default hourly). Works once the broker has set its
   * plugins up (its first operation, or `broker.ready()`); waits up to 10 s
   * for that, then throws.
   */
  purgeResults(options?: PurgeResultsOptions): Promise<number>
}

interface Setup {
  readonly executor: Executor
  readonly ns: Namespace
  readonly storeSql: string
  readonly channel: string
}

/**
 * Result storage: `await message.result()` returns what the handler
 * returned, for actors declared with `storeResults: true`.
 *
 * In the transaction that records a batch of outcomes, the plugin stores
 * each success's value, each final failure (`ResultFailure`) and each
 * cancellation (`ResultCancelled`) in its own `results` table, with a TTL
 * (`resultTtlMs`, default 10 minutes), then sends one notification per
 * batch. Attempts that will be retried store nothing. A value that does not
 * survive JSON (a Date, a BigInt, a cycle, ...) is stored as a failure that
 * says why; the message itself stays successful.
 *
 * A blocked `message.result()` waits on the broker's shared LISTEN
 * connection (no pool connection held while waiting), or polls in
 * `pollOnly` mode. When a pipeline step fails for good, its failure is
 * stored for the remaining steps too, so `pipeline.result()` throws it
 * instead of timing out.
 *
 * @example
 * import { createBroker } from '@iddqueue/core'
 * import { results } from '@iddqueue/results'
 *
 * const broker = createBroker({ url: process.env.DATABASE_URL, plugins: [results()] })
 * await broker.migrate() // creates the results table
 * const add = broker.actor('add', (a: number, b: number) => a + b, { storeResults: true })
 * const message = await add.send(1, 2)
 * const sum: number = await message.result({ timeoutMs: 5_000 }) // 3, once a worker ran it
 */
export function results(options?: ResultsOptions): ResultsPlugin {
  const config = resolveResultsOptions(options)
  const policies = new Map<string, ActorResultsPolicy>()
  // Encoded in the process hook (outside the settle transaction), read in settle.
  const encoded = new WeakMap<Message, EncodedResult>()
  const latch = new SetupLatch<Setup>('results()')

  return {
    name: PLUGIN_NAME,
    migrations: migrationSet.migrations,
    actorOptions: ['storeResults', 'resultTtlMs'],
    checkActor(actor) {
      policies.set(actor.name, actorPolicy(actor, config))
    },
    middleware: {
      forActor: (actor) => policies.get(actor.name)?.store === true,
      async process(event, next) {
        const outcome = await next()
        if (outcome.kind === 'success') encoded.set(event.message, encodeResult(outcome.result))
        return outcome
      },
      async settle(event) {
        const setup = latch.current
        if (!setup) return
        const rows = resultRows(event.settled, policies, encoded)
        if (rows.length === 0) return
        const ids = rows.map((row) => row.id)
        const payloads: string[] = []
        for (let i = 0; i < ids.length; i += IDS_PER_NOTIFICATION)
          payloads.push(ids.slice(i, i + IDS_PER_NOTIFICATION).join(','))
        // Plain, checked values only: this statement cannot fail for reasons of data.
        await event.executor.query(setup.storeSql, [
          ids,
          rows.map((row) => row.status),
          rows.map((row) => row.value),
          rows.map((row) => row.failure),
          rows.map((row) => row.ttlMs),
          setup.channel,
          payloads,
        ])
      },
      async revive(event) {
        const setup = latch.current
        if (!setup) return
        await event.executor.query(deleteResultsSql(setup.ns), [event.messageIds])
      },
    },
    async setup(context) {
      const ns = context.namespace
      const channel = ns.channel('result')
      const waiters = resultWaiters(context, channel, context.logger)
      const loader = new ResultLoader(context.executor, readResultsSql(ns))
      context.provideResults(createResultReader(loader, waiters, config.pollIntervalMs))
      const setup: Setup = {
        executor: context.executor,
        ns,
        storeSql: storeResultsSql(ns),
        channel,
      }
      latch.set(setup)
      let timer: NodeJS.Timeout | undefined
      if (config.purgeIntervalMs !== false) {
        timer = setInterval(() => {
          purgeExpired(setup, PURGE_BATCH, true).catch((error: unknown) =>
            context.logger.warn('results: purge of expired results failed', { error }),
          )
        }, config.purgeIntervalMs)
        timer.unref()
      }
      return async () => {
        clearInterval(timer)
        await waiters.close()
        latch.clear()
      }
    },
    async purgeResults(purgeOptions = {}) {
      if (typeof purgeOptions !== 'object' || purgeOptions === null) {
        throw new InvalidOptionError(
          `Invalid purgeResults() options ${describeValue(purgeOptions)}: expected an object`,
        )
      }
      const batchSize = purgeOptions.batchSize ?? PURGE_BATCH
      if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
        throw new InvalidOptionError(
          `Invalid batchSize ${describeValue(purgeOptions.batchSize)}: expected an integer of at least 1`,
        )
      }
      return purgeExpired(await latch.wait('purge results'), batchSize, false)
    },
  }
}
