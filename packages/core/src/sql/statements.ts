import type { Namespace } from '@iddqueue/schema'
import type { Message } from '../message/message.js'
import { ASYNC_COMMIT } from './async-commit.js'
import { claimSql, nextEtaSql } from './claim.js'
import { claimDeduplicationKeySql, readDeduplicationKeySql } from './claim-deduplication-key.js'
import {
  insertMessagesSql,
  insertOneMessageSql,
  insertUniformMessagesSql,
} from './insert-messages.js'
import { purgeDeduplicationSql, purgeMessagesSql } from './purge.js'
import { reconcileSql } from './reconcile.js'
import { recoverOrphansSql, recoverSql } from './recover.js'
import { replaceQueuedSql, repointDeduplicationKeySql } from './replace-queued.js'
import { reportProgressSql } from './report-progress.js'
import { rescuerLeadSql } from './rescuer-lead.js'
import {
  ackSql,
  ackWithClausesSql,
  dropCancelledSql,
  settleSql,
  settleWithClausesSql,
} from './settle.js'
import type { SettleClauses } from './settle-clauses.js'
import { deregisterWorkerSql, heartbeatSql, registerWorkerSql } from './workers.js'

/** @internal Every hot-path statement for one namespace, built once per broker. */
export interface Statements {
  readonly wakeChannel: string
  readonly controlChannel: string
  /** Inserts that fail on an existing id (the fast path). */
  readonly insert: InsertStatements
  /** Inserts that leave an existing id untouched. */
  readonly insertSkippingExisting: InsertStatements
  readonly claimDeduplicationKey: string
  readonly readDeduplicationKey: string
  readonly replaceQueued: string
  readonly reportProgress: string
  readonly repointDeduplicationKey: string
  /** The claim for a worker of one queue, and for several (see `claim.ts`). */
  readonly claimOne: string
  readonly claimMany: string
  readonly nextEta: string
  readonly ack: string
  readonly settle: string
  /**
   * The settle and the ack with the plugins' clauses (decision 0016), for a
   * batch with a message they concern; same parameters and rows as
   * `settle` and `ack`.
   */
  readonly settleWith:
    | {
        readonly concerns: (message: Message) => boolean
        readonly sql: string
        readonly ack: string
      }
    | undefined
  readonly dropCancelled: string
  readonly resultChannel: string
  readonly cancelRequested: string
  readonly registerWorker: string
  readonly heartbeat: string
  readonly deregisterWorker: string
  readonly recover: string
  readonly reconcile: string
  readonly recoverOrphans: string
  readonly rescuerLead: string
  readonly wakeQueues: string
  /** The same, committed without waiting for the WAL flush: a hint sent after a send's commit. */
  readonly wakeAfterCommit: string
  readonly purgeMessages: string
  readonly purgeDeduplication: string
}

/** @internal The three shapes of the message insert (see `insert-messages.ts`). */
export interface InsertStatements {
  /** One array per column. */
  readonly many: string
  /** Ids and arguments as arrays, everything else shared. */
  readonly uniform: string
  /** One message, a value per column. */
  readonly one: string
}

function insertStatements(ns: Namespace, skipExisting: boolean): InsertStatements {
  return {
    many: insertMessagesSql(ns, skipExisting),
    uniform: insertUniformMessagesSql(ns, skipExisting),
    one: insertOneMessageSql(ns, skipExisting),
  }
}

/** @internal `deleteOnSuccess`: acknowledgements delete the row instead of keeping it `done`. */
export function statements(
  ns: Namespace,
  deleteOnSuccess: boolean,
  settleClauses: readonly SettleClauses[] = [],
): Statements {
  return Object.freeze({
    wakeChannel: ns.channel('wake'),
    controlChannel: ns.channel('control'),
    insert: insertStatements(ns, false),
    insertSkippingExisting: insertStatements(ns, true),
    claimDeduplicationKey: claimDeduplicationKeySql(ns),
    readDeduplicationKey: readDeduplicationKeySql(ns),
    replaceQueued: replaceQueuedSql(ns),
    reportProgress: reportProgressSql(ns),
    repointDeduplicationKey: repointDeduplicationKeySql(ns),
    claimOne: claimSql(ns, 1),
    claimMany: claimSql(ns, 2),
    nextEta: nextEtaSql(ns),
    ack: ackSql(ns, deleteOnSuccess),
    settle: settleSql(ns, deleteOnSuccess),
    settleWith: mergedSettle(ns, deleteOnSuccess, settleClauses),
    dropCancelled: dropCancelledSql(ns),
    resultChannel: ns.channel('result'),
    cancelRequested: `select id from ${ns.table('messages')} where id = any($1::uuid[]) and cancel_requested`,
    registerWorker: registerWorkerSql(ns),
    heartbeat: heartbeatSql(ns),
    deregisterWorker: deregisterWorkerSql(ns),
    recover: recoverSql(ns),
    reconcile: reconcileSql(ns),
    recoverOrphans: recoverOrphansSql(ns),
    rescuerLead: rescuerLeadSql(ns),
    wakeQueues: 'select count(pg_notify($1, queue))::int as woken from unnest($2::text[]) as queue',
    wakeAfterCommit: `select count(pg_notify($1, queue))::int as woken from unnest($2::text[]) as queue where ${ASYNC_COMMIT}`,
    purgeMessages: purgeMessagesSql(ns),
    purgeDeduplication: purgeDeduplicationSql(ns),
  })
}

/** The plugins' settle clauses in one statement, or undefined when none has any. */
function mergedSettle(
  ns: Namespace,
  deleteOnSuccess: boolean,
  all: readonly SettleClauses[],
): Statements['settleWith'] {
  if (all.length === 0) return undefined
  const effects = all.flatMap((clauses) => (clauses.effect ? [clauses.effect] : []))
  const merged: SettleClauses = {
    concerns: (message) => all.some((clauses) => clauses.concerns(message)),
    ctes: all.flatMap((clauses) => (clauses.ctes ? [clauses.ctes] : [])).join(',\n'),
    ...(effects.length > 0
      ? { effect: effects.length === 1 ? effects[0]! : `row(${effects.join(', ')})::text` }
      : {}),
  }
  return {
    concerns: merged.concerns,
    sql: settleWithClausesSql(ns, deleteOnSuccess, merged),
    ack: ackWithClausesSql(ns, deleteOnSuccess, merged),
  }
}
