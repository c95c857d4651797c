import { type AttemptOutcome, describeValue, type Executor } from '@iddqueue/schema'
import { InvalidStateError } from '../errors.js'
import type { Message } from '../message/message.js'
import { uuid7 } from '../message/uuid7.js'
import { pageLimit } from '../ops/failed.js'
import { checkUuid, refuseOption } from '../options/check-option.js'
import type { PluginContext } from '../plugin/iddqueue-plugin.js'
import type { Middleware, Outcome, SettledMessage } from '../plugin/middleware-interface.js'
import { SetupLatch } from '../plugin/setup-latch.js'
import type { Logger } from '../runtime/logger.js'
import { wrapError } from '../runtime/wrap-error.js'
import {
  finishAttemptsSql,
  listAttemptsSql,
  purgeAttemptsSql,
  startAttemptsSql,
} from '../sql/attempts.js'
import { failureRecord } from '../worker/failure-record.js'
import type { AttemptHistoryPlugin, AttemptRecord } from './attempt-record.js'
import { BatchWriter } from './batch-writer.js'

/** Rows per purge statement. */
const PURGE_BATCH = 5_000
const PLUGIN_NAME = '@iddqueue/core/history'

interface Setup {
  readonly executor: Executor
  readonly logger: Logger
  readonly starts: BatchWriter<readonly [string, string, string, string, string]>
  readonly finishSql: string
  readonly listSql: string
  readonly purgeSql: string
}

/** An attempt that started: its record's id, then what the handler came to. */
interface OpenAttempt {
  readonly id: string
  durationMs?: number | undefined
  outcome?: Outcome | undefined
}

interface AttemptRow {
  id: string
  message_id: string
  actor: string
  queue: string
  worker_id: string | null
  started_at: Date
  finished_at: Date | null
  outcome: AttemptOutcome | null
  duration_ms: number | null
  error_type: string | null
  error_message: string | null
}

function record(row: AttemptRow): AttemptRecord {
  return {
    id: row.id,
    messageId: row.message_id,
    actor: row.actor,
    queue: row.queue,
    workerId: row.worker_id,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    status: row.finished_at === null ? 'incomplete' : (row.outcome ?? 'incomplete'),
    durationMs: row.duration_ms,
    errorType: row.error_type,
    errorMessage: row.error_message,
  }
}

/** The row values that close an attempt, or undefined to leave it incomplete. */
function finish(
  settled: SettledMessage,
  attempt: OpenAttempt,
): [AttemptOutcome, string | null, string | null] | undefined {
  const { outcome } = settled
  if (outcome.kind === 'success') return ['successful', null, null]
  // Handed back unfinished (an outer middleware's choice): the attempt has no outcome.
  if (outcome.kind === 'requeue') return undefined
  // A failure, or a failure that ended the message as cancelled: the error
  // the handler came to (the settled failure record is already cleaned).
  const error =
    outcome.kind === 'failure'
      ? outcome.error
      : attempt.outcome?.kind === 'failure'
        ? attempt.outcome.error
        : undefined
  const failure =
    settled.failure ?? (error === undefined ? undefined : failureRecord(error, settled.attempt))
  return ['failed', failure?.type ?? 'MessageCancelled', failure?.message ?? 'Cancelled']
}

/**
 * Opt-in attempt history: one record per execution of a handler (each retry
 * has its own) with the actor, queue, worker, PostgreSQL start and finish
 * times, duration, outcome (`successful` or `failed`) and error type and text
 * (at most 2,000 characters). Arguments, options and results are never
 * stored, although an error text may hold application data.
 *
 * The record is written before the handler starts, so a worker that dies (or
 * gives up on a handler at shutdown) leaves it `incomplete`; the outcome is
 * written in the settle transaction, batched. Messages skipped before their
 * handler (age limit, pause, cancellation) get no record. History is
 * diagnostic: a failure to write it is logged and never fails the message.
 * It costs one batched insert per start and a savepoint per settle batch.
 *
 * The plugin uses core's `attempts` table (no migration of its own). Put it
 * in one broker's `plugins`; `listAttempts` and `purgeAttempts` work once
 * that broker has set its plugins up, which its first operation (a send, a
 * worker start) does; they wait up to 10 s for it, then throw.
 *
 * @example
 * import { attemptHistory, createBroker } from '@iddqueue/core'
 *
 * const history = attemptHistory()
 * const broker = createBroker({ url: process.env.DATABASE_URL, plugins: [history] })
 * const message = await flaky.send('order-42')
 * // ... once a worker ran it:
 * const { items } = await history.listAttempts(message.id)
 * console.log(items.map((a) => [a.status, a.errorType, a.durationMs]))
 */
export function attemptHistory(): AttemptHistoryPlugin {
  const latch = new SetupLatch<Setup>('attemptHistory()')
  const open = new WeakMap<Message, OpenAttempt>()

  const middleware: Middleware = {
    async process(event, next) {
      const current = latch.current
      if (!current) return next()
      const { message } = event
      const id = uuid7()
      try {
        await current.starts.add([id, message.id, message.actor, message.queue, event.workerId])
      } catch (error) {
        current.logger.warn('attempt history: could not record an attempt start; running without', {
          message: message.id,
          error: wrapError(error, 'record an attempt start'),
        })
        return next()
      }
      const attempt: OpenAttempt = { id }
      open.set(message, attempt)
      const started = performance.now()
      try {
        attempt.outcome = await next()
        return attempt.outcome
      } catch (error) {
        attempt.outcome = { kind: 'failure', error }
        throw error
      } finally {
        attempt.durationMs = performance.now() - started
      }
    },

    async settle(event) {
      const current = latch.current
      if (!current) return
      const ids: string[] = []
      const outcomes: string[] = []
      const durations: (number | null)[] = []
      const types: (string | null)[] = []
      const texts: (string | null)[] = []
      for (const settled of event.settled) {
        const attempt = open.get(settled.message)
        if (!attempt) continue
        const values = finish(settled, attempt)
        if (!values) continue
        ids.push(attempt.id)
        outcomes.push(values[0])
        durations.push(attempt.durationMs ?? null)
        types.push(values[1])
        texts.push(values[2])
      }
      if (ids.length === 0) return
      try {
        // A savepoint: a failed history write must not fail the settle transaction.
        await event.executor.transaction((tx) =>
          tx.query(current.finishSql, [ids, outcomes, durations, types, texts]),
        )
      } catch (error) {
        current.logger.warn('attempt history: could not record attempt outcomes', {
          attempts: ids.length,
          error: wrapError(error, 'record attempt outcomes'),
        })
      }
    },
  }

  return {
    name: PLUGIN_NAME,
    middleware,

    setup(context: PluginContext) {
      if (latch.current) {
        throw new InvalidStateError(
          'attemptHistory() is already set up by another broker: call attemptHistory() once per broker',
        )
      }
      const { namespace, executor, logger } = context
      const startSql = startAttemptsSql(namespace)
      latch.set({
        executor,
        logger,
        starts: new BatchWriter(async (rows) => {
          await executor.query(startSql, [
            rows.map((row) => row[0]),
            rows.map((row) => row[1]),
            rows.map((row) => row[2]),
            rows.map((row) => row[3]),
            rows.map((row) => row[4]),
          ])
        }),
        finishSql: finishAttemptsSql(namespace),
        listSql: listAttemptsSql(namespace),
        purgeSql: purgeAttemptsSql(namespace),
      })
      return undefined
    },

    async listAttempts(messageId, options = {}) {
      checkUuid('message id', messageId)
      const limit = pageLimit(options.limit)
      if (options.after !== undefined) checkUuid('after', options.after, { where: 'cursor' })
      const current = await latch.wait('list attempts')
      try {
        const rows = await current.executor.query<AttemptRow>(current.listSql, [
          messageId,
          options.after ?? null,
          limit,
        ])
        const items = rows.map(record)
        return {
          items,
          nextAfter: items.length === limit ? (items[items.length - 1]?.id ?? null) : null,
        }
      } catch (error) {
        throw wrapError(error, `list the attempts of ${messageId}`)
      }
    },

    async purgeAttempts(options) {
      const olderThanMs = options?.olderThanMs
      // Required: there is no default age for deleting history.
      if (typeof olderThanMs !== 'number' || !Number.isInteger(olderThanMs) || olderThanMs < 0) {
        const expected = 'an integer of 0 or more'
        throw refuseOption(
          `Invalid olderThanMs ${describeValue(olderThanMs)}: expected ${expected}`,
          {
            option: 'olderThanMs',
            value: olderThanMs,
            expected,
          },
        )
      }
      const current = await latch.wait('purge attempts')
      let total = 0
      try {
        for (;;) {
          const [row] = await current.executor.query<{ deleted: number }>(current.purgeSql, [
            olderThanMs,
            PURGE_BATCH,
          ])
          const deleted = row?.deleted ?? 0
          total += deleted
          if (deleted < PURGE_BATCH) return total
        }
      } catch (error) {
        throw wrapError(error, 'purge attempts')
      }
    },
  }
}
